package cli

import (
	"fmt"
	"net/url"
	"os"
	"text/tabwriter"

	"github.com/gwlabs/gateway/internal/app"
)

type configCmd struct {
	Check configCheckCmd `cmd:"" help:"Validate the configuration and print every setting, where it comes from, secrets redacted."`
}

type configCheckCmd struct {
	JSON bool `name:"json" help:"Print JSON."`
}

func (c *configCheckCmd) Run(rc *runCtx) error {
	settings, err := app.ReadSettings(rc.configFile, os.Getenv)
	if err != nil {
		return err
	}
	for _, w := range app.EnvTypos(os.Environ()) {
		fmt.Fprintln(rc.stderr, "gateway: warning:", w)
	}
	cfg, err := rc.config()
	if err != nil {
		return err
	}
	if err := app.CheckStoreURL(cfg.DatabaseURL); err != nil {
		return err
	}
	for i := range settings {
		if app.SecretSetting(settings[i].Name) && settings[i].Value != "" {
			settings[i].Value = "(set)"
		}
		if u, err := url.Parse(settings[i].Value); err == nil && u.User != nil {
			if _, has := u.User.Password(); has {
				u.User = url.UserPassword(u.User.Username(), "xxxxx")
				settings[i].Value = u.String()
			}
		}
		if settings[i].Value != "" {
			settings[i].Effective = settings[i].Value
		}
	}
	if c.JSON {
		return printJSON(rc.stdout, map[string]any{"valid": true, "settings": settings})
	}
	tw := tabwriter.NewWriter(rc.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SETTING\tVALUE\tFROM\tDEFAULT")
	for _, s := range settings {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, s.Effective, s.Source, s.Default)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(rc.stdout, "configuration is valid")
	return nil
}
