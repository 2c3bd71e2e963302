// Command srqconform checks a device's Shared Receive Queue against the
// reference model of SRQ semantics and reports every deviation with a short
// trace that replays.
//
//	srqconform run [flags]          run the suite (default: the built-in emulator)
//	srqconform rules [-format F]    print the rule catalogue
//	srqconform profiles [NAME]      list the profiles, or show one (-format yaml|json: as a profile file)
//	srqconform deviations           list the emulator's behaviours and mutants, one a line
//	srqconform concurrent [flags]   record concurrent histories and check them for linearizability
//	srqconform replay [flags] FILE  re-run a saved counterexample
//	srqconform infer [flags]        write the profile a device shows
//	srqconform vm [flags]           run the suite on rxe in a QEMU guest
//	srqconform render [-format F] REPORT.json
//	srqconform matrix REPORT.json...
//
// Exit status:
//
//	0    conformant (replay: the trace passes)
//	1    deviations found (replay: the deviation reproduced)
//	2    usage or environment error: a bad flag, argument or input file, a
//	     device that would not open, an output that cannot be written
//	3    the harness or the device failed during the run; the partial report
//	     was written to every requested output, with the error in it
//	130  interrupted (SIGINT or SIGTERM); the partial report, marked
//	     interrupted, was written (vm stops the guest and has none). A
//	     second signal exits at once.
//
// Where to read: main.go (run dispatches on the subcommand), then the
// subcommand's function: commands.go (cmdRun, cmdRules, cmdProfiles,
// cmdReplay), infer.go, concurrentcmd.go, deviations.go, vmcmd.go (cmdVM,
// cmdRender, cmdMatrix). The helpers they share: flags.go (the common
// flags), drivers.go (the driver registry; driver_cgo.go adds the
// libibverbs driver under the rdma build tag), profilearg.go, outputs.go,
// parallel.go (-parallel: one child process per share of the seeds) and
// signals.go (interruption).
package main
