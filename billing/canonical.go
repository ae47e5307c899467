package billing

// CanonicalModel returns the id the rate card (or OpenRouter's price
// list) prices vendor's model under, after its aliases and the vendor's
// case rules: every spelling of a model gives one id. ok is false for a
// model on neither.
func (b *Biller) CanonicalModel(vendor, model string) (string, bool) {
	if vendor == OpenRouter {
		if m, ok := b.openRouter.List().Lookup(model); ok {
			return m.ID, true
		}
		return "", false
	}
	if m, ok := b.card.Lookup(vendor, model); ok {
		return m.ID, true
	}
	return "", false
}
