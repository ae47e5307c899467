package main

import (
	"fmt"
	"os"

	"github.com/gwlabs/gateway/ratecard"
)

type ratecardCmd struct {
	Check ratecardCheckCmd `cmd:"" help:"Validate a rate-card file and list every difference from the embedded card."`
}

// ratecardCheckCmd is "gateway ratecard check FILE": FILE is validated as a
// rate card (the format GATEWAY_RATECARD_FILE takes) and every difference
// from the embedded card is listed, so that an operator can review a new
// price list before loading it.
type ratecardCheckCmd struct {
	File string `arg:"" help:"A rate-card file." type:"existingfile"`
}

func (c *ratecardCheckCmd) Run(rc *runCtx) error {
	f, err := os.Open(c.File)
	if err != nil {
		return err
	}
	defer f.Close()
	file, err := ratecard.Load(f)
	if err != nil {
		return fmt.Errorf("%s: %w", c.File, err)
	}
	card, err := ratecard.Default()
	if err != nil {
		return err
	}
	fmt.Fprintf(rc.stdout, "%s: valid, %d models (version %s); against the embedded card %s:\n", c.File, len(file.Models()), file.Version, card.Version)
	return ratecard.WriteDiff(rc.stdout, ratecard.Diff(card, file))
}
