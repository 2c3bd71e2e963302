package emu_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

// TestCatalogueLabelsName checks every label of the catalogue against what
// it names: a behaviour's "profile:X" a field of model.Profile (one
// model.FieldOwner knows), its "rule:X" a rule, its "info:X" a field of
// drivers.Info, its "harness:X" an outcome of the harness's own side; a mutant's rule and the others it breaks rules. A
// misspelt label fails here instead of pointing a reader nowhere.
func TestCatalogueLabelsName(t *testing.T) {
	fields := map[string]bool{}
	for _, f := range model.FieldNames() {
		fields[f] = true
	}
	info := reflect.TypeFor[drivers.Info]()
	checked := 0
	for _, d := range emu.Catalogue() {
		if d.Kind != emu.KindBehaviour {
			for _, r := range d.Breaks() {
				if _, ok := model.RuleByID(r); !ok {
					t.Errorf("%s %s breaks %q: model.RuleByID(%q) found no rule", d.Kind, d.Name, r, r)
				}
				checked++
			}
			continue
		}
		kind, name, _ := strings.Cut(d.Rule, ":")
		switch kind {
		case "profile":
			_, owned := model.FieldOwner[name]
			if !fields[name] || !owned {
				t.Errorf("behaviour %s is labelled %q: model.FieldNames() has %q: %v, model.FieldOwner has it: %v; want both", d.Name, d.Rule, name, fields[name], owned)
			}
		case "rule":
			if _, ok := model.RuleByID(name); !ok {
				t.Errorf("behaviour %s is labelled %q: model.RuleByID(%q) found no rule", d.Name, d.Rule, name)
			}
		case "info":
			if f, ok := info.FieldByName(name); !ok || f.Type.Kind() != reflect.Bool {
				t.Errorf("behaviour %s is labelled %q: drivers.Info has no bool field %q", d.Name, d.Rule, name)
			}
		case "harness":
			// Not the device: what the harness's own side reports (the
			// peer), named by its drivers constant.
			if name != "PeerSilent" {
				t.Errorf("behaviour %s is labelled %q: the harness outcomes are drivers.PeerSilent; want harness:PeerSilent", d.Name, d.Rule)
			}
		default:
			t.Errorf("behaviour %s is labelled %q; want profile:FIELD, rule:ID, info:FIELD or harness:PeerSilent", d.Name, d.Rule)
		}
		checked++
	}
	if checked < 30 {
		t.Errorf("checked %d labels of emu.Catalogue(); want the whole catalogue (over 30)", checked)
	}
}
