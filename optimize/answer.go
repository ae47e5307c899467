package optimize

// DirectiveText is the directive the optimizer adds (Text): the guard's
// answer side protects it like the caller's own system content.
func (o *Optimizer) DirectiveText() string { return Text }
