// Command srqblame measures how a conformance run blames a set of held-out
// bugs, drivers/faulty by default, drivers/faulty2 with -set faulty2 (a
// second set written from the rule statements alone), its third batch
// with -set faulty3 (faulty2.Third, written the same way in session 14),
// its fourth with -set faulty4 (faulty2.Fourth, session 21), its fifth
// with -set faulty5 (faulty2.Fifth) or its sixth with -set faulty6
// (faulty2.Sixth, session 24): for each bug and seed it runs
// conformance.Check under the documented profile and records which rules
// fail, then prints a table per bug (its label, the seeds that caught it,
// the rules blamed per seed) and the figures: kinds caught in every seed,
// caught runs blamed on one rule and on exactly the label, runs with more
// than one failing rule, runs that blame RECV-COMPLETION for another
// rule's bug, and the longest run as a multiple of its budget.
//
// Usage:
//
//	srqblame [-set faulty|faulty2|faulty3|faulty4|faulty5|faulty6] [-seeds 1,2,3] [-budget 5s | -cases N] [-run REGEXP] [-parallel N] [-o FILE] [-format md|json]
//	srqblame -list [-set faulty|faulty2|faulty3|faulty4|faulty5|faulty6] [-run REGEXP]
//
// Where to read: main.go (flags, then realMain), sets.go (the bug sets),
// measure.go (one run per bug and seed, and the figures), render.go (the
// table and the JSON).
package main
