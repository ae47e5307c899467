package cli

import (
	"fmt"
	"os"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/ratecard"
	"github.com/gwlabs/gateway/ratecard/listing"
)

type ratecardCmd struct {
	Check ratecardCheckCmd `cmd:"" help:"Validate a rate-card file, list every difference from the embedded card, every billable unit per model with its source, and the fields refused."`
}

// ratecardCheckCmd is "gateway ratecard check FILE": FILE is validated as a
// rate card (the format GATEWAY_RATECARD_FILE takes) and every difference
// from the embedded card is listed, so that an operator can review a new
// price list before loading it.
type ratecardCheckCmd struct {
	File string `arg:"" help:"A rate-card file." type:"existingfile"`
	JSON bool   `name:"json" help:"Print JSON: the file's version and model count, the embedded card's version, and the changes."`
	// Units adds every billable unit per model with its source, and the
	// units beyond tokens that are refused.
	Units bool `name:"units" help:"Also list every billable unit per model with its source, and the fields refused (priced by no card)."`
}

// RatecardCheckJSON is ratecard check --json.
type RatecardCheckJSON struct {
	File            string           `json:"file"`
	Valid           bool             `json:"valid"`
	Version         string           `json:"version"`
	Models          int              `json:"models"`
	EmbeddedVersion string           `json:"embedded_version"`
	Changes         []RatecardChange `json:"changes"`
	// Units is every billable unit the file prices, per model, with its
	// source; Refused the units beyond tokens refused on every model.
	Units   []listing.UnitRow     `json:"units,omitempty"`
	Refused []listing.RefusedUnit `json:"refused,omitempty"`
}

// RatecardChange is one difference from the embedded card.
type RatecardChange struct {
	Model string `json:"model"`
	Kind  string `json:"kind"` // added, removed or changed
	Field string `json:"field"`
	Old   string `json:"old,omitempty"`
	New   string `json:"new,omitempty"`
}

func (c *ratecardCheckCmd) Run(rc *runCtx) error {
	f, err := os.Open(c.File)
	if err != nil {
		return err
	}
	defer f.Close()
	file, err := ratecard.Load(f)
	if err != nil {
		return gw.Errorf(gw.CodeInvalidRequest, "%s: %v", c.File, err)
	}
	card, err := ratecard.Default()
	if err != nil {
		return err
	}
	if c.JSON {
		out := RatecardCheckJSON{File: c.File, Valid: true, Version: file.Version, Models: len(file.Models()), EmbeddedVersion: card.Version, Changes: []RatecardChange{}}
		if c.Units {
			out.Units, out.Refused = listing.Units(file), listing.RefusedUnits(file)
		}
		for _, ch := range ratecard.Diff(card, file) {
			out.Changes = append(out.Changes, RatecardChange{ch.Model, ch.Kind, ch.Field, ch.Old, ch.New})
		}
		return printJSON(rc.stdout, out)
	}
	fmt.Fprintf(rc.stdout, "%s: valid, %d models (version %s); against the embedded card %s:\n", c.File, len(file.Models()), file.Version, card.Version)
	if err := ratecard.WriteDiff(rc.stdout, ratecard.Diff(card, file)); err != nil || !c.Units {
		return err
	}
	return listing.WriteUnits(rc.stdout, file)
}
