"""`portlint ARGS...` under cProfile, the stats written to the file named by --prof-out.

    python bench/profile_scan.py --prof-out scan.prof scan . --jobs 1 --no-progress ...

`python -m cProfile -m portlint` writes nothing: the console entry point ends the process
with os._exit (portlint/cli.py `run`, to skip tearing down the model). This calls the click
group itself (the library path, which returns normally) with the profiler on around it; the
interpreter's teardown is outside the profile, as it is outside a real scan."""

import cProfile
import sys

from portlint.cli import main


def profile(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] != "--prof-out":
        raise SystemExit("usage: profile_scan.py --prof-out FILE PORTLINT-ARGS...")
    out, args = argv[1], argv[2:]
    # the default clock (perf_counter): a CPU clock (time.process_time) is a system call per
    # reading here and made the profiled run 5x slower than an unprofiled one, which
    # distorts the shares more than the wait time a loaded machine adds (a preemption lands on
    # a function with a probability that follows its CPU time, so shares stay unbiased;
    # bench/stage_timers.py's CPU counters are the cross-check)
    prof = cProfile.Profile()
    code = 0
    prof.enable()
    try:
        main.main(args=args, prog_name="portlint", standalone_mode=True)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        prof.disable()
        prof.dump_stats(out)
    return code


if __name__ == "__main__":
    sys.exit(profile(sys.argv[1:]))
