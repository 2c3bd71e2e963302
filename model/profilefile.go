package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ProfileFormat is the format tag a profile file carries.
const ProfileFormat = "srqconform-profile/1"

// ProfileFileFormats are the formats a profile file can be written in.
var ProfileFileFormats = []string{"yaml", "json"}

// anyErrorText is how a profile file writes AnyError.
const anyErrorText = "any error status"

// fieldKind is what a profile field's type allows in a file: the values, in
// the order Open lists them, and how to build the field from some of them.
type fieldKind struct {
	values []string
	build  func(vals []string) any
}

// kindOf returns the fieldKind of a Choice of string values vs.
func kindOf[T ~string](vs ...T) fieldKind {
	texts := make([]string, len(vs))
	for i, v := range vs {
		texts[i] = string(v)
	}
	return fieldKind{values: texts, build: func(vals []string) any {
		out := make([]T, len(vals))
		for i, v := range vals {
			out[i] = T(v)
		}
		return Either(out...)
	}}
}

// fieldKinds lists, by field type, every value the model knows. A value
// added to profile.go must be added here; TestEveryValueIsListed checks it.
var fieldKinds = map[reflect.Type]fieldKind{
	reflect.TypeFor[Choice[ErrnoSign]]():      kindOf(ErrnoPositive, ErrnoNegative, ErrnoMinusOne),
	reflect.TypeFor[Choice[CheckOrder]]():     kindOf(FullFirst, SGEFirst),
	reflect.TypeFor[Choice[SGELimit]]():       kindOf(SGEAgainstSRQ, SGEAgainstDevice),
	reflect.TypeFor[Choice[Acceptance]]():     kindOf(Accepted, Rejected),
	reflect.TypeFor[Choice[CapacityReport]](): kindOf(ReportAtLeast, ReportPow2Less1, ReportUnchanged),
	reflect.TypeFor[Choice[CapacityRule]]():   kindOf(CapacityExact, CapacityAtLeast, CapacityPow2),
	reflect.TypeFor[Choice[QueryRule]]():      kindOf(QuerySame, QueryAtLeast, QueryENOSYS, QueryEOPNOTSUPP),
	reflect.TypeFor[Choice[SlotFree]]():       kindOf(FreeAtFetch, FreeAtPoll),
	reflect.TypeFor[Choice[LimitAfterFire]](): kindOf(LimitReadsZero, LimitKept),
	reflect.TypeFor[Choice[ArmBelow]]():       kindOf(FireAtNextFetch, FireAtOnce),
	reflect.TypeFor[Choice[LimitBound]]():     kindOf(LimitUpToCapacity, LimitBelowCapacity),
	reflect.TypeFor[Choice[ZeroLength]]():     kindOf(ZeroIs2GiB, ZeroIsZero),
	reflect.TypeFor[Choice[BeforeRTR]]():      kindOf(Dropped, Buffered),
	reflect.TypeFor[Choice[Fate]]():           kindOf(ToErr, Unchanged),
	reflect.TypeFor[Choice[KeyCheck]]():       kindOf(CheckAllSGEs, CheckTouchedSGEs),
	reflect.TypeFor[Choice[ResizeSupport]]():  kindOf(ResizeAsAdvertised, ResizeUnsupported),
	reflect.TypeFor[Choice[Raised]]():         kindOf(Raise, NoRaise),
	reflect.TypeFor[Choice[BadWRReport]]():    kindOf(BadWRFirst, BadWRNull),
	reflect.TypeFor[Choice[Repeat]]():         kindOf(OncePerEntry, PerPacket),
	reflect.TypeFor[Choice[RecvCapsCheck]]():  kindOf(RecvCapsIgnored, RecvCapsWRChecked, RecvCapsBothChecked),
	reflect.TypeFor[Choice[EmptyRC]]():        kindOf(EmptyRNR, EmptyTerminate),
	reflect.TypeFor[StatusSet]():              statusKind(),
}

// statusKind is the fieldKind of a StatusSet: every status AnyError holds,
// by name (statuses the model does not name are written STATUS_n).
func statusKind() fieldKind {
	var names []string
	byName := map[string]WCStatus{}
	for s := WCStatus(0); s < 32; s++ {
		if AnyError.Has(s) {
			names = append(names, s.String())
			byName[s.String()] = s
		}
	}
	return fieldKind{values: names, build: func(vals []string) any {
		var set StatusSet
		for _, v := range vals {
			set |= Statuses(byName[v])
		}
		return set
	}}
}

// FieldValues returns every value the model knows for a profile field, or
// nil when there is no such field. For a completion-status field they are
// the error statuses, any of which the field's set may hold.
func FieldValues(name string) []string {
	f, ok := reflect.TypeFor[Profile]().FieldByName(name)
	if !ok || !slices.Contains(FieldNames(), name) {
		return nil
	}
	return slices.Clone(fieldKinds[f.Type].values)
}

// OpenNote is the note Open gives every field.
const OpenNote = "open for inference: every value the model knows"

// Open returns the profile with every implementation-defined field open:
// each Choice allows every value the model knows and each completion-status
// set allows any error status. A device held to it can deviate only from
// rules every driver must keep; Report.Resolved then tells which values it
// showed (srqconform infer).
//
// The documented values come first, so that the model's canonical outcome,
// which the random cases are generated from, stays the documented one; but
// NegativeSGE lists "accepted" first, so that the suite never posts a
// negative num_sge to a device that may not check it (it would copy a huge
// length).
func Open() Profile {
	p := Profile{Name: "open", Description: "Every implementation-defined field open, for inference.", Notes: map[string]Note{}}
	d := Documented()
	pv := reflect.ValueOf(&p).Elem()
	for _, name := range FieldNames() {
		f := pv.FieldByName(name)
		switch k := fieldKinds[f.Type()]; {
		case f.Type() == reflect.TypeFor[StatusSet]():
			f.Set(reflect.ValueOf(AnyError))
		case name == "NegativeSGE":
			f.Set(reflect.ValueOf(Either(Accepted, Rejected)))
		default:
			vals := d.values(name)
			for _, v := range k.values {
				if !slices.Contains(vals, v) {
					vals = append(vals, v)
				}
			}
			f.Set(reflect.ValueOf(k.build(vals)))
		}
		p.Notes[name] = Note{Source: OpenNote}
	}
	return p
}

// FieldTexts returns the values field name of p allows, as a profile file
// writes them: a Choice's values in order, a completion-status set's
// statuses by name (AnyError as one entry, "any error status").
func (p Profile) FieldTexts(name string) []string {
	v := reflect.ValueOf(p).FieldByName(name)
	if set, ok := v.Interface().(StatusSet); ok {
		if set == AnyError {
			return []string{anyErrorText}
		}
		var out []string
		for s := WCStatus(0); s < 32; s++ {
			if set.Has(s) {
				out = append(out, s.String())
			}
		}
		return out
	}
	return p.values(name)
}

// SetField sets field name of p to allow exactly vals, given as a profile
// file writes them (FieldTexts). It fails on an unknown field, an unknown
// value, a repeated value or an empty list.
func (p *Profile) SetField(name string, vals []string) error {
	if !slices.Contains(FieldNames(), name) {
		return fmt.Errorf("unknown field %q: want one of %s", name, strings.Join(FieldNames(), ", "))
	}
	if len(vals) == 0 {
		return fmt.Errorf("field %s: empty list: want at least one value", name)
	}
	f := reflect.ValueOf(p).Elem().FieldByName(name)
	k := fieldKinds[f.Type()]
	if f.Type() == reflect.TypeFor[StatusSet]() && len(vals) == 1 && vals[0] == anyErrorText {
		f.Set(reflect.ValueOf(AnyError))
		return nil
	}
	for i, v := range vals {
		if !slices.Contains(k.values, v) {
			want := "one or a list of " + strings.Join(quoteAll(k.values), ", ")
			if f.Type() == reflect.TypeFor[StatusSet]() {
				want = strconv.Quote(anyErrorText) + ", or one or a list of " + strings.Join(quoteAll(statusNames()), ", ") + " (or STATUS_n)"
			}
			return fmt.Errorf("field %s: unknown value %q: want %s", name, v, want)
		}
		if slices.Contains(vals[:i], v) {
			return fmt.Errorf("field %s: value %q listed twice", name, v)
		}
	}
	f.Set(reflect.ValueOf(k.build(vals)))
	return nil
}

// statusNames are the statuses the model names (the others are STATUS_n).
func statusNames() []string {
	var out []string
	for _, n := range fieldKinds[reflect.TypeFor[StatusSet]()].values {
		if !strings.HasPrefix(n, "STATUS_") {
			out = append(out, n)
		}
	}
	return out
}

func quoteAll(vs []string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = strconv.Quote(v)
	}
	return out
}

// The keys of a profile file.
const (
	keyFormat      = "format"
	keyName        = "name"
	keyDescription = "description"
	keyFields      = "fields"
	keyNotes       = "notes"
	keySource      = "source"
	keyVerified    = "verified"
)

// MarshalProfile writes p as a profile file in format "yaml" or "json":
// the format tag, name, description, then fields (field name to its value,
// or to a list of values where the field is open) and notes (field name to
// source and verified), both in the profile's declaration order.
// ParseProfile reads it back to an equal profile.
func MarshalProfile(p Profile, format string) ([]byte, error) {
	switch format {
	case "yaml":
		return marshalYAML(p)
	case "json":
		return marshalJSON(p)
	}
	return nil, fmt.Errorf("unknown profile file format %q: want %s", format, strings.Join(ProfileFileFormats, " or "))
}

func marshalYAML(p Profile) ([]byte, error) {
	str := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
	mapping := func(kv ...*yaml.Node) *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Content: kv} }
	fields, notes := mapping(), mapping()
	for _, name := range FieldNames() {
		vals := p.FieldTexts(name)
		v := str(vals[0])
		if len(vals) > 1 {
			v = &yaml.Node{Kind: yaml.SequenceNode}
			for _, x := range vals {
				v.Content = append(v.Content, str(x))
			}
		}
		fields.Content = append(fields.Content, str(name), v)
		n := p.Notes[name]
		notes.Content = append(notes.Content, str(name), mapping(
			str(keySource), str(n.Source),
			str(keyVerified), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(n.Verified)}))
	}
	doc := mapping(str(keyFormat), str(ProfileFormat), str(keyName), str(p.Name), str(keyDescription), str(p.Description),
		str(keyFields), fields, str(keyNotes), notes)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encode profile %s as YAML: %w", p.Name, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode profile %s as YAML: %w", p.Name, err)
	}
	return b.Bytes(), nil
}

// ordered is a JSON object that keeps its keys in order.
type ordered []struct {
	k string
	v any
}

func (o *ordered) add(k string, v any) {
	*o = append(*o, struct {
		k string
		v any
	}{k, v})
}

// MarshalJSON writes the object with its keys in order, without escaping
// the <, > and & that sources contain.
func (o ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	b.WriteByte('{')
	for i, kv := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := enc.Encode(kv.k); err != nil {
			return nil, err
		}
		b.WriteByte(':')
		if err := enc.Encode(kv.v); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func marshalJSON(p Profile) ([]byte, error) {
	var fields, notes, doc ordered
	for _, name := range FieldNames() {
		vals := p.FieldTexts(name)
		if len(vals) == 1 {
			fields.add(name, vals[0])
		} else {
			fields.add(name, vals)
		}
		var n ordered
		n.add(keySource, p.Notes[name].Source)
		n.add(keyVerified, p.Notes[name].Verified)
		notes.add(name, n)
	}
	doc.add(keyFormat, ProfileFormat)
	doc.add(keyName, p.Name)
	doc.add(keyDescription, p.Description)
	doc.add(keyFields, fields)
	doc.add(keyNotes, notes)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encode profile %s as JSON: %w", p.Name, err)
	}
	return b.Bytes(), nil
}

// LooksLikeProfileFile reports whether a -profile value names a file rather
// than a built-in profile: it names an existing file, holds a path
// separator, or ends in .json, .yaml or .yml.
func LooksLikeProfileFile(s string) bool {
	if strings.ContainsRune(s, '/') || strings.ContainsRune(s, filepath.Separator) {
		return true
	}
	switch strings.ToLower(filepath.Ext(s)) {
	case ".json", ".yaml", ".yml":
		return true
	}
	st, err := os.Stat(s)
	return err == nil && st.Mode().IsRegular()
}

// LoadProfile reads a profile file (see ParseProfile). Every error is one
// line that names the file.
func LoadProfile(path string) (Profile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is already in the message
		}
		return Profile{}, fmt.Errorf("profile file %s: read: %w", path, err)
	}
	return ParseProfile(path, b)
}

// ParseProfile reads a profile file that MarshalProfile wrote, or a vendor
// wrote in the same form. The file is JSON when name ends in .json or the
// data starts with '{', YAML otherwise. Every field must be given (a value,
// or a non-empty list of values for an open field) with a note whose source
// is not empty; unknown keys, fields and values are errors. Every error is
// one line that names the file (name) and, where it is about one, the field.
func ParseProfile(name string, data []byte) (Profile, error) {
	p, err := parseProfile(name, data)
	if err != nil {
		return Profile{}, fmt.Errorf("profile file %s: %s", name, oneLine(err.Error()))
	}
	return p, nil
}

// oneLine folds a multi-line error (yaml's unmarshal errors) into one line.
func oneLine(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, ":\n", ": "), "\n", "; ")
	return strings.Join(strings.Fields(s), " ")
}

func parseProfile(name string, data []byte) (Profile, error) {
	var doc any
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return Profile{}, errors.New("empty file: want a profile (srqconform profiles -format yaml documented prints one)")
	}
	if strings.EqualFold(filepath.Ext(name), ".json") || trimmed[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(data))
		if err := dec.Decode(&doc); err != nil {
			return Profile{}, fmt.Errorf("not valid JSON: %w", err)
		}
		if dec.More() {
			return Profile{}, errors.New("not valid JSON: more than one value")
		}
	} else if err := yaml.Unmarshal(data, &doc); err != nil {
		return Profile{}, fmt.Errorf("not valid YAML: %w", err)
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return Profile{}, fmt.Errorf("want a mapping of %s, %s, %s, %s and %s, got %s", keyFormat, keyName, keyDescription, keyFields, keyNotes, kindName(doc))
	}
	for k := range top {
		if !slices.Contains([]string{keyFormat, keyName, keyDescription, keyFields, keyNotes}, k) {
			return Profile{}, fmt.Errorf("unknown key %q: want %s, %s, %s, %s and %s", k, keyFormat, keyName, keyDescription, keyFields, keyNotes)
		}
	}
	f, ok := top[keyFormat]
	if !ok {
		return Profile{}, fmt.Errorf("%s is missing: want %s: %s as the first line", keyFormat, keyFormat, ProfileFormat)
	}
	if f != ProfileFormat {
		return Profile{}, fmt.Errorf("%s is %v: want %q", keyFormat, f, ProfileFormat)
	}
	var p Profile
	var err error
	if p.Name, err = text(top, keyName); err != nil {
		return Profile{}, err
	}
	if p.Name == "" {
		return Profile{}, fmt.Errorf("%s is empty: want the profile's name", keyName)
	}
	if p.Description, err = text(top, keyDescription); err != nil {
		return Profile{}, err
	}
	fields, err := mapping(top, keyFields)
	if err != nil {
		return Profile{}, err
	}
	notes, err := mapping(top, keyNotes)
	if err != nil {
		return Profile{}, err
	}
	names := FieldNames()
	for _, m := range []map[string]any{fields, notes} {
		for f := range m {
			if !slices.Contains(names, f) {
				return Profile{}, fmt.Errorf("unknown field %q: want one of %s", f, strings.Join(names, ", "))
			}
		}
	}
	p.Notes = map[string]Note{}
	for _, f := range names {
		raw, ok := fields[f]
		if !ok {
			return Profile{}, fmt.Errorf("field %s is missing from %s: every field must be given", f, keyFields)
		}
		vals, err := valueList(raw)
		if err != nil {
			return Profile{}, fmt.Errorf("field %s: %w", f, err)
		}
		if err := p.SetField(f, vals); err != nil {
			return Profile{}, err
		}
		n, err := note(notes, f)
		if err != nil {
			return Profile{}, err
		}
		p.Notes[f] = n
	}
	if err := checkBuiltinName(p); err != nil {
		return Profile{}, err
	}
	return p, nil
}

// checkBuiltinName refuses a profile that takes a built-in profile's name
// but not its fields: a report or replay that names the profile would
// otherwise stand for the built-in while holding the device to other
// values. A file that is a built-in's (profiles -format yaml NAME) passes.
func checkBuiltinName(p Profile) error {
	b, ok := Profiles()[p.Name]
	if !ok {
		return nil
	}
	if d := differingFields(b, p); len(d) > 0 {
		return fmt.Errorf("%s %q is a built-in profile's, and this profile differs from it in %s: give the edited profile a name of its own (e.g. %s-edited)",
			keyName, p.Name, strings.Join(d, ", "), p.Name)
	}
	return nil
}

// differingFields lists the fields whose values differ between a and b.
func differingFields(a, b Profile) []string {
	var d []string
	for _, f := range FieldNames() {
		if !slices.Equal(a.FieldTexts(f), b.FieldTexts(f)) {
			d = append(d, f)
		}
	}
	return d
}

// IsBuiltin reports whether p is the built-in profile of its name, field
// for field: a name alone is enough to find it again.
func IsBuiltin(p Profile) bool {
	b, ok := Profiles()[p.Name]
	return ok && len(differingFields(b, p)) == 0
}

// EmbedProfile returns p as a profile file in JSON, for a saved file (a
// replay, a history) to carry, or nil when p is a built-in profile, which
// its name finds again.
func EmbedProfile(p Profile) (json.RawMessage, error) {
	if IsBuiltin(p) {
		return nil, nil
	}
	return MarshalProfile(p, "json")
}

// EmbeddedProfile returns the profile a saved file (what) names and, when
// it is not a built-in one, holds (raw, as EmbedProfile wrote it).
func EmbeddedProfile(what, name string, raw json.RawMessage) (Profile, error) {
	if len(raw) == 0 {
		p, err := ProfileByName(name)
		if err != nil {
			return Profile{}, fmt.Errorf("%s: %w, and the file holds no profile_file", what, err)
		}
		return p, nil
	}
	p, err := ParseProfile("profile_file of the "+what, raw)
	if err != nil {
		return Profile{}, err
	}
	if p.Name != name {
		return Profile{}, fmt.Errorf("%s: profile is %q but its profile_file is named %q: want the same name", what, name, p.Name)
	}
	return p, nil
}

// text returns a required string value.
func text(m map[string]any, key string) (string, error) {
	v, ok := m[key]
	if !ok {
		return "", fmt.Errorf("%s is missing", key)
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s is %s: want a string", key, kindName(v))
	}
	return s, nil
}

// mapping returns a required mapping value.
func mapping(m map[string]any, key string) (map[string]any, error) {
	v, ok := m[key]
	if !ok {
		return nil, fmt.Errorf("%s is missing", key)
	}
	out, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is %s: want a mapping of field names", key, kindName(v))
	}
	return out, nil
}

// valueList reads a field's value: one value or a list. A number stands for
// its text, so that an unquoted YAML -1 reads as the value "-1".
func valueList(v any) ([]string, error) {
	scalar := func(x any) (string, bool) {
		switch x := x.(type) {
		case string:
			return x, true
		case int, int64, uint64, float64:
			return fmt.Sprint(x), true
		}
		return "", false
	}
	if s, ok := scalar(v); ok {
		return []string{s}, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("value is %s: want a value or a list of values", kindName(v))
	}
	if len(list) == 0 {
		return nil, errors.New("empty list: want at least one value")
	}
	out := make([]string, len(list))
	for i, x := range list {
		s, ok := scalar(x)
		if !ok {
			return nil, fmt.Errorf("list entry %d is %s: want a value", i+1, kindName(x))
		}
		out[i] = s
	}
	return out, nil
}

// note reads field f's note: source (not empty) and verified.
func note(notes map[string]any, f string) (Note, error) {
	raw, ok := notes[f]
	if !ok {
		return Note{}, fmt.Errorf("field %s has no entry in %s: want its source and whether it is verified", f, keyNotes)
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return Note{}, fmt.Errorf("%s of field %s is %s: want a mapping of %s and %s", keyNotes, f, kindName(raw), keySource, keyVerified)
	}
	for k := range m {
		if k != keySource && k != keyVerified {
			return Note{}, fmt.Errorf("%s of field %s: unknown key %q: want %s and %s", keyNotes, f, k, keySource, keyVerified)
		}
	}
	src, err := text(m, keySource)
	if err != nil {
		return Note{}, fmt.Errorf("%s of field %s: %w", keyNotes, f, err)
	}
	if strings.TrimSpace(src) == "" {
		return Note{}, fmt.Errorf("%s of field %s: %s is empty: want where the value comes from", keyNotes, f, keySource)
	}
	n := Note{Source: src}
	if v, ok := m[keyVerified]; ok {
		b, ok := v.(bool)
		if !ok {
			return Note{}, fmt.Errorf("%s of field %s: %s is %s: want true or false", keyNotes, f, keyVerified, kindName(v))
		}
		n.Verified = b
	}
	return n, nil
}

// kindName names the kind of a decoded value, for errors.
func kindName(v any) string {
	switch v := v.(type) {
	case nil:
		return "empty"
	case string:
		return fmt.Sprintf("the string %q", v)
	case bool:
		return fmt.Sprintf("the boolean %v", v)
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case map[any]any:
		return "a mapping whose keys are not all strings"
	}
	return fmt.Sprintf("%v", v)
}
