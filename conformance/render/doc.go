// Package render writes conformance reports for people (text, Markdown,
// HTML), machines (JSON) and CI (JUnit XML, KTAP).
//
// Where to read: render.go (Write picks the format; Text, Markdown and
// TimeMarkdown), then matrix.go (Matrix: several reports side by side),
// then html.go, matrixhtml.go and ktap.go.
// It reads conformance.Report and writes nothing back.
package render
