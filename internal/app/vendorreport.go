package app

import (
	"net/http"

	"github.com/gwlabs/gateway/reconcile/vendorreport"
	"github.com/gwlabs/gateway/route"
)

// VendorReports builds the readers of every vendor's report from the
// configuration: each reader calls the vendor's configured base URL with
// its admin key (none: the vendor is unreconcilable). canonical maps a
// vendor's model name to the ledger's (billing.Biller.CanonicalModel);
// client may be nil.
func (c Config) VendorReports(client *http.Client, canonical func(vendor, model string) (string, bool)) vendorreport.Set {
	cfgs := map[string]vendorreport.Config{}
	for v, vc := range c.Vendors {
		cfgs[v] = vendorreport.Config{
			BaseURL:   vc.BaseURL,
			AdminKey:  vendorreport.Secret(vc.AdminKey),
			Client:    client,
			Canonical: canonical,
		}
	}
	return vendorreport.New(route.Vendors(), cfgs)
}
