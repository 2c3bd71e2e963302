// Package render writes conformance reports for people (text, Markdown),
// machines (JSON) and CI (JUnit XML).
//
// Where to read: render.go (Write picks the format; Text, Markdown and
// TimeMarkdown), then matrix.go (Matrix: several reports side by side).
// It reads conformance.Report and writes nothing back.
package render
