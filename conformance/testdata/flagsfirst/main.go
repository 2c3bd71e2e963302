// Command flagsfirst is a library user that parses its own flags before
// it calls conformance.Check, outside go test (TestCheckAfterTheCallersFlagParse).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

func main() {
	cases := flag.Int("cases", 5, "random cases")
	flag.Parse()
	rep, err := conformance.Check(context.Background(), emu.New(), drivers.Config{}, conformance.Options{Profile: model.Documented(), Seed: 1, Cases: *cases})
	if err != nil {
		fmt.Fprintln(os.Stderr, "flagsfirst:", err)
		os.Exit(2)
	}
	fmt.Printf("cases %d conformant %v\n", rep.CasesRun, rep.Conformant())
}
