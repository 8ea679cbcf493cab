"""The `portlint` command line. Heavy modules are imported inside the commands that need
them, so `portlint scan one_file.cu` starts quickly."""

from __future__ import annotations

import os
from contextlib import contextmanager
import sys
from pathlib import Path

import click

from portlint import __version__
from portlint.discovery.roots import named_tree, project_root
from portlint.core.files import WriteRefused, read_bytes, read_limited, read_text, source_identities, write_file

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _fail(message: str) -> "NoReturn":  # noqa: F821
    click.echo(f"portlint: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


@contextmanager
def _usage_errors(*errors: type[Exception]):
    """Within the block, one of these exceptions is a usage error: its one-line message on
    stderr and exit 2 (a bad option value, config file, baseline or diff base)."""
    try:
        yield
    except errors as exc:
        _fail(str(exc))


def _out(text: str, nl: bool = False) -> None:
    """The one way a command writes to stdout. A reader that went away (`portlint rules | head
    -1`, a closed descriptor) is not an error of the scan: what is left to print goes to
    /dev/null and the command ends with the exit code its result gives."""
    if nl:
        text += "\n"
    if sys.stdout is None:  # started with descriptor 1 closed: nobody to tell
        return
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        _stdout_gone()
    except ValueError:  # stdout was closed before the command ran
        pass


def _stdout_gone() -> None:
    """Point file descriptor 1 at /dev/null, so that the interpreter's last flush of what is
    still buffered does not raise again."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError):
        pass


def _split_csv(values: tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    for v in values:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return tuple(out)


def _printable(text: str) -> str:
    from portlint.output.formats.text import escape_controls

    return escape_controls(text)


def _use_color(choice: str, stream) -> bool:
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return hasattr(stream, "isatty") and stream.isatty()


class _Commands(click.Group):
    """The command group, with one rule for bugs: an exception that no command handled
    (in a reporter, the fix engine, anywhere outside per-file isolation) is one line and
    exit 2, never a traceback and exit 1, which would read as "findings"."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except BrokenPipeError:  # stdout's reader left while something wrote past _out
            _stdout_gone()
            sys.exit(EXIT_ERROR)
        except Exception as exc:
            _fail(f"internal error: {type(exc).__name__}: {exc} (please report it)")


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="portlint")
def main() -> None:
    """Find CUDA, Triton and Python code that will not port to ROCm, TPU, Trainium or Gaudi."""


def run() -> "NoReturn":  # noqa: F821
    """The console script and `python -m portlint`: the command, then an exit without the
    interpreter's teardown.

    A scan of a large tree ends with the Python project model and the parsed trees still
    alive (about a million objects on the bench corpus). Tearing them down at interpreter
    exit, a last cyclic collection over all of them and then freeing them one by one, took
    1.6-1.8 s of a 10 s cold scan of the bench corpus, after the report was written. By the
    time the command returns, everything it writes is written and closed (reports, the
    cache's atomic renames) and its worker pools are shut down; the exit handlers still run
    (multiprocessing's, the temporary files'), the standard streams are flushed, and the
    process ends with `os._exit`. A library caller of `main` keeps the normal exit."""
    import atexit

    try:
        main()
        code = EXIT_CLEAN
    except SystemExit as exc:
        code = exc.code
    if code is None:
        code = EXIT_CLEAN
    elif not isinstance(code, int):  # sys.exit("message"): what Python would print, and 1
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        if stream is None:  # started with that descriptor closed
            continue
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`portlint ... | head`): nothing more to say
            pass
    os._exit(code)


def _settings(paths, select, ignore, targets, config_path, isolated, no_cache, cache_dir, jobs, compile_commands,
              follow_symlinks, max_file_size, config_start=None, allow_empty_select=True):
    """Settings as `scan` and `report` both build them: the config file (named, or found
    from `config_start` / the first path), rule selection, targets and cache directory, so
    a report shows what a scan would."""
    from portlint.core.cache import default_cache_dir
    from portlint.core.config import Settings, find_config, git_root, load_config, parse_targets, validate_rule_selectors

    settings = Settings()
    cfg = config_path
    if cfg is None and not isolated:
        start = config_start if config_start is not None else (paths[0] if paths[0].exists() else Path.cwd())
        cfg = find_config(start)
    if cfg is not None:
        load_config(cfg, settings)
    else:  # where report paths are written from (nothing is read from it: discovery/roots.py)
        settings.root = git_root(Path.cwd()) or Path.cwd().resolve()
        if not Path.cwd().resolve().is_relative_to(settings.root):
            settings.root = Path.cwd().resolve()
    if select:
        settings.select = validate_rule_selectors(_split_csv(select), "--select", "command line", allow_empty=allow_empty_select)
    if ignore:
        settings.ignore = settings.ignore + validate_rule_selectors(_split_csv(ignore), "--ignore", "command line")
    if targets:
        settings.targets = parse_targets(list(_split_csv(targets)), "--target")
    if max_file_size:
        settings.max_file_size = max_file_size
    settings.follow_symlinks = follow_symlinks
    settings.jobs = jobs if jobs is not None else 0
    settings.compile_commands = compile_commands.resolve() if compile_commands else None
    if not no_cache:
        # the default cache lives in the project root of the first path named (never the
        # working directory's: `cd / && portlint scan /abs/tree` writes in /abs/tree)
        first = config_start if config_start is not None else paths[0]
        settings.cache_dir = cache_dir.resolve() if cache_dir else default_cache_dir(project_root(settings, first, named_tree(settings, first)))
    return settings


def _selection_options(settings, extend_select) -> None:
    """--extend-select: rules added to the selection the config and --select made (ruff's
    meaning), so `--extend-select hipify` keeps every default rule."""
    from portlint.core.config import validate_rule_selectors

    if extend_select:
        more = validate_rule_selectors(_split_csv(extend_select), "--extend-select", "command line")
        settings.extend_select = settings.extend_select + tuple(i for i in more if i not in settings.extend_select)


def _check_scan_inputs(paths, stdin_filename, apply_fix, show_diff, suppress_reason, shard_spec):
    """(reading stdin, the shard (I, N) or None, the suppression reason or None), or exit 2
    on a combination that cannot work."""
    named = [str(p) for p in paths]
    from_stdin = named == ["-"]
    if "-" in named and not from_stdin:
        _fail("`-` (stdin) cannot be combined with other paths")
    if from_stdin and stdin_filename is None:
        _fail("scanning stdin (`-`) needs --stdin-filename PATH (the file the buffer stands for)")
    if stdin_filename is not None and not from_stdin:
        _fail("--stdin-filename is only for scanning stdin: pass `-` as the path")
    if from_stdin and (apply_fix or show_diff or suppress_reason is not None or shard_spec):
        _fail("--fix, --diff, --add-suppressions and --shard change or split files: they do not apply to stdin")
    if suppress_reason is not None and apply_fix:
        _fail("--add-suppressions and --fix both edit the files: run one, then the other")
    shard = reason = None
    if shard_spec is not None:
        from portlint.discovery.shard import ShardError, parse_shard

        with _usage_errors(ShardError):
            shard = parse_shard(shard_spec)
    if suppress_reason is not None:
        from portlint.output.add_suppressions import ReasonError, check_reason

        with _usage_errors(ReasonError):
            reason = check_reason(suppress_reason)
    return from_stdin, shard, reason


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "concise", "json", "sarif", "github", "gitlab", "junit"]), default="text", show_default=True, help="Output format (concise: one line per finding, no excerpt; gitlab: code quality JSON; junit: JUnit XML).")
@click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False), help="Write the report to FILE instead of stdout.")
@click.option("--select", multiple=True, help="Rules to enable instead of the defaults: ids (PTL102), prefixes (PTL1), globs (PTL1*), names (inline-ptx-asm), families (cuda_warp) or presets (hipify, ALL); comma-separated or repeated.")
@click.option("--extend-select", multiple=True, help="Rules to enable besides the selection (the defaults, or --select): e.g. --extend-select hipify.")
@click.option("--ignore", multiple=True, help="Rules to disable: ids, prefixes, globs, names or families, as for --select.")
@click.option("--target", "targets", multiple=True, help="Targets the code will run on: rocm,tpu,trainium,gaudi. Naming them puts every torch/JAX file in scope for them; without, scope is inferred per package and all targets are reported.")
@click.option("--fail-on", type=click.Choice(["error", "warning", "note"]), help="Lowest severity that makes the exit code 1 (default: warning).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings (still 2 on errors).")
@click.option("--jobs", "-j", type=click.IntRange(min=0), default=None, help="Worker processes (default: all cores; 1 = no workers).")
@click.option("--no-progress", is_flag=True, help="Never print progress on stderr.")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True, help="Colour text output (auto: on a terminal, unless NO_COLOR is set).")
@click.option("--config", "config_path", type=click.Path(path_type=Path, dir_okay=False), help="Read settings from this pyproject.toml or portlint.toml.")
@click.option("--isolated", is_flag=True, help="Ignore configuration files.")
@click.option("--force-exclude", is_flag=True, help="Apply excludes to files named on the command line too (for pre-commit).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the result cache.")
@click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False), help="Where to keep the cache (default: .portlint_cache in the project root).")
@click.option("--compile-commands", type=click.Path(path_type=Path, dir_okay=False, exists=True), help="compile_commands.json for the libclang pass.")
@click.option("--sarif-include-suppressed", is_flag=True, help="Keep suppressed findings in SARIF and JSON output (marked as suppressed).")
@click.option("--sarif-category", help="Set SARIF runAutomationDetails.id to CATEGORY/ (one analysis per category on GitHub).")
@click.option("--fix", "apply_fix", is_flag=True, help="Apply safe fixes to the files (atomically), then report what is left.")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix or --diff: also apply fixes marked unsafe.")
@click.option("--diff", "show_diff", is_flag=True, help="Print the fixes as a unified diff; change no file (even with --fix); exit 1 when there is a change to show.")
@click.option("--follow-symlinks", is_flag=True, help="Scan through symlinks that lead out of the scanned tree (--fix still never writes there).")
@click.option("--max-file-size", type=click.IntRange(min=1), help="Skip files larger than this many bytes.")
@click.option("--baseline", "baseline_path", type=click.Path(path_type=Path, dir_okay=False), help="Leave out findings already in FILE, an earlier --format json report (matched by fingerprint, counted).")
@click.option("--diff-base", metavar="REF", help="Report only findings on lines added or changed since the merge base of git REF and HEAD (HEAD in pre-commit, origin/main in CI).")
@click.option("--statistics", is_flag=True, help="Print how many findings each rule has (most first) instead of the findings.")
@click.option("--add-suppressions", "suppress_reason", metavar="REASON", help="Write a `portlint: ignore[ID] -- REASON` comment before every current finding, then rescan (with --diff: show them, change nothing).")
@click.option("--stdin-filename", type=click.Path(path_type=Path), help="With the path `-`: the file the buffer on stdin stands for (report path, language, config).")
@click.option("--watch", is_flag=True, help="After the report, keep watching: rescan and report again whenever a scanned file changes, appears or goes (Ctrl-C stops; unchanged files come from the cache).")
@click.option("--shard", "shard_spec", metavar="I/N", help="Scan only part I of N (files split by a stable hash of their path); join the SARIF logs with `portlint merge-sarif`.")
def scan(paths, fmt, output, select, extend_select, ignore, targets, fail_on, exit_zero, jobs, no_progress, color, config_path, isolated,
         force_exclude, no_cache, cache_dir, compile_commands, sarif_include_suppressed, sarif_category, apply_fix,
         unsafe_fixes, show_diff, max_file_size, follow_symlinks, baseline_path, diff_base, statistics, suppress_reason,
         stdin_filename, watch, shard_spec) -> None:
    """Scan PATHS (files or directories; default: .; `-` with --stdin-filename: stdin) and
    report portability problems."""
    from portlint.core.config import ConfigError
    from portlint.core.model import Severity
    from portlint.core.catalog import RuleError

    paths = list(paths) or [Path(".")]
    from_stdin, shard, reason = _check_scan_inputs(paths, stdin_filename, apply_fix, show_diff, suppress_reason, shard_spec)
    if watch and (from_stdin or apply_fix or show_diff or suppress_reason is not None):
        _fail("--watch rescans files as they change: it does not combine with stdin, --fix, --diff or --add-suppressions")
    start = stdin_filename.absolute() if from_stdin else None
    with _usage_errors(ConfigError, RuleError):
        settings = _settings(paths, select, ignore, targets, config_path, isolated, no_cache, cache_dir, jobs, compile_commands,
                             follow_symlinks, max_file_size, config_start=start, allow_empty_select=False)
        _selection_options(settings, extend_select)
        if targets:
            settings.declared_targets = True
        if fail_on:
            settings.fail_on = Severity(fail_on)
        settings.force_exclude = force_exclude
    baseline = changed = None
    if baseline_path is not None:
        from portlint.findings.baseline import BaselineError, load_baseline

        with _usage_errors(BaselineError):
            baseline = load_baseline(baseline_path)
    if diff_base is not None:
        from portlint.findings.changed_lines import ChangedLines, ChangedLinesError

        with _usage_errors(ChangedLinesError):
            changed = ChangedLines(diff_base, start or paths[0].absolute())

    from portlint.discovery.files import discover
    from portlint.pipeline.engine import FILES_FAILED, scan_files, worst_severity
    from portlint.pipeline.workers import tune_gc

    tune_gc()

    def narrow(result, scanned) -> None:
        """--diff-base, then --baseline: what is left to report (counted in the summary)."""
        if changed is not None:
            from portlint.findings.changed_lines import ChangedLinesError, narrow_to_changes

            with _usage_errors(ChangedLinesError):
                result.counters["outside-diff"] = narrow_to_changes(result, settings, changed)
        if baseline is not None:
            from portlint.findings.baseline import apply_baseline

            outcome = apply_baseline(result.findings, baseline, scanned)
            result.counters["baselined"] = outcome.baselined
            result.counters["baseline-stale"] = outcome.stale
        result.counters = dict(sorted(result.counters.items()))

    def discover_files():
        try:
            found, found_notices = discover(paths, settings)
        except FileNotFoundError as exc:
            _fail(f"{exc}: no such file or directory")
        if shard is not None:
            from portlint.discovery.shard import take_shard

            found, found_notices = take_shard(found, found_notices, *shard)
        return found, found_notices

    def rescan():
        found, found_notices = discover_files()
        again = scan_files(found, settings)
        narrow(again, [sf.display for sf in found])
        return found, found_notices, again

    if from_stdin:
        from portlint.pipeline.stdin_scan import read_buffer, scan_buffer

        data, why_not = read_buffer(sys.stdin.buffer, settings.max_file_size)
        from portlint.discovery.languages import classify

        if str(stdin_filename).strip() in ("", ".") or (data is not None and classify(str(stdin_filename), data)[0] is None):
            _fail(f"--stdin-filename {_printable(str(stdin_filename))!r}: not a file portlint scans (name it as the file "
                  "the buffer stands for, with its extension: k.cu, model.py, CMakeLists.txt)")
        if changed is not None and data is not None:
            changed.set_current(str(start), data)
        files, notices = [], []
        result = scan_buffer(data, stdin_filename, settings, why_not)
        narrow(result, [f.path for f in result.findings])
    else:
        files, notices = discover_files()
        progress = None
        if not no_progress and sys.stderr.isatty() and len(files) > 200:
            def progress(done: int, total: int) -> None:
                if done == total or done % 50 == 0:
                    click.echo(f"\rportlint: {done}/{total} files", err=True, nl=done == total)
        with _usage_errors(RuleError):
            result = scan_files(files, settings, progress)
        narrow(result, [sf.display for sf in files])
    result.notices = sorted(notices + result.notices, key=lambda n: n.sort_key())
    # notices go to stderr only (as ruff prints them); the text report does not repeat
    # them, the JSON and SARIF reports carry them as data
    for n in result.notices:
        click.echo(f"portlint: {_printable(n.path)}: {_printable(n.message)}", err=True)

    if reason is not None or apply_fix or show_diff:
        from portlint.output.fixes import apply_fixes

        extra: list = []
        if reason is not None:
            from portlint.output.add_suppressions import suppression_findings

            to_fix, extra = suppression_findings(result.findings, files, settings, reason)
        else:
            to_fix = result.findings
        # --diff changes no file, with or without --fix
        run = apply_fixes(to_fix, settings, files, include_unsafe=unsafe_fixes, write=(apply_fix or reason is not None) and not show_diff)
        for n in extra + run.notices:
            click.echo(f"portlint: {_printable(n.path)}: {_printable(n.message)}", err=True)
        if show_diff:
            _out(run.diff)
            return sys.exit(EXIT_FINDINGS if run.diff else EXIT_CLEAN)
        if run.changed:
            if reason is not None:  # one fix per file holds all its comments
                click.echo(f"portlint: added suppression comments in {run.changed} file{'s' if run.changed != 1 else ''}; rescanning", err=True)
            else:
                click.echo(f"portlint: fixed {run.changed} finding{'s' if run.changed != 1 else ''}; rescanning", err=True)
            files, _, result = rescan()
            result.notices = sorted(notices + extra + run.notices + result.notices, key=lambda n: n.sort_key())
        elif run.notices or extra:
            result.notices = sorted(result.notices + extra + run.notices, key=lambda n: n.sort_key())

    from portlint.output.formats import render

    options = {
        "color": fmt in ("text", "concise") and output is None and _use_color(color, sys.stdout),
        "include_suppressed": sarif_include_suppressed,
        "category": sarif_category,
        "show_source": True,
        # the summary's first lines: targets (all four unless narrowed) and releases
        "run_header": fmt == "text",
    }

    scanned_files = [files]  # what the report must not be written over (--watch rescans it)

    def emit(result) -> None:
        if statistics:
            from portlint.output.formats.statistics import render_statistics

            text = render_statistics(result, fmt)
        else:
            text = render(fmt, result, settings, options)
            if fmt == "sarif":
                from portlint.output.formats.sarif import over_limit_message

                message = over_limit_message(result, options)
                if message:
                    click.echo(f"portlint: warning: {message}", err=True)
        _write(text, output, [sf.real for sf in scanned_files[0]])

    emit(result)
    if watch:
        def watch_rescan():
            found, _, again = rescan()
            scanned_files[0] = found
            return again

        result = _watch(files, discover_files, watch_rescan, emit) or result
    failed = result.counters.get(FILES_FAILED, 0)
    if failed:  # whatever else was found: files went unchecked, which no fail level excuses
        _fail(f"internal error: {failed} file{'s' if failed != 1 else ''} could not be analysed, the report is "
              "incomplete (see the notices; please report them)")
    worst = worst_severity(result.findings)
    if exit_zero or worst is None or worst.rank < settings.fail_on.rank:
        sys.exit(EXIT_CLEAN)
    sys.exit(EXIT_FINDINGS)


WATCH_INTERVAL_ENV = "PORTLINT_WATCH_INTERVAL"  # seconds between looks (default 0.5)
WATCH_RESCANS_ENV = "PORTLINT_WATCH_RESCANS"  # stop after this many rescans (tests, scripts)


def _file_states(files) -> dict[str, tuple[int, int]]:
    out = {}
    for sf in files:
        try:
            st = os.stat(sf.real)
        except OSError:
            continue
        out[str(sf.real)] = (st.st_mtime_ns, st.st_size)
    return out


def _watch(files, discover_files, rescan, emit):
    """--watch: look at the scanned files (discovered again each time, so new and removed
    files count) every PORTLINT_WATCH_INTERVAL seconds; on a change, rescan and emit the
    report again. Stops on Ctrl-C, or after PORTLINT_WATCH_RESCANS rescans when that is set.
    Returns the last result (the exit code follows it)."""
    import time

    try:
        interval = float(os.environ.get(WATCH_INTERVAL_ENV, "0.5"))
        limit = int(os.environ[WATCH_RESCANS_ENV]) if os.environ.get(WATCH_RESCANS_ENV) else None
    except ValueError:
        _fail(f"{WATCH_INTERVAL_ENV} must be a number of seconds and {WATCH_RESCANS_ENV} a whole number")
    states = _file_states(files)
    result = None
    rescans = 0
    click.echo("portlint: watching for changes (Ctrl-C stops)", err=True)
    try:
        while limit is None or rescans < limit:
            time.sleep(interval)
            found, _ = discover_files()
            now = _file_states(found)
            if now == states:
                continue
            changed = sorted(set(now.items()) ^ set(states.items()))
            names = {p for p, _ in changed}
            states = now
            click.echo(f"portlint: {len(names)} file{'s' if len(names) != 1 else ''} changed; rescanning", err=True)
            result = rescan()
            emit(result)
            rescans += 1
    except KeyboardInterrupt:
        pass
    return result


def _write(text: str, output: Path | None, scanned=()) -> None:
    """The report on stdout, or in `output` through the one writer (portlint.core.files):
    never through a symlink, never onto a file the scan read (`scanned`), atomically. A
    relative path (or one inside the working directory) must stay inside it once resolved."""
    if output is not None:
        cwd = Path.cwd()
        root = cwd if Path(os.path.abspath(output)).is_relative_to(cwd) else None
        try:
            write_file(output, text.encode("utf-8"), root=root, make_folders=True, sources=source_identities(scanned))
        except OSError as exc:
            _fail(f"cannot write {_printable(str(output))}: {exc.strerror or exc}")
    else:
        _out(text)


@main.command("merge-sarif")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path, dir_okay=False))
@click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False), help="Write the merged log to FILE instead of stdout.")
def merge_sarif_cmd(inputs, output) -> None:
    """Join the SARIF logs of `scan --shard I/N` runs into one run, as one scan writes it."""
    from portlint.output.merge_sarif import MergeError, merge_files

    with _usage_errors(MergeError):
        text = merge_files(list(inputs))
    _write(text, output)


@main.command("report")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["html", "markdown", "json"]), default="html", show_default=True, help="html: a self-contained page; markdown: tables for $GITHUB_STEP_SUMMARY or a PR comment; json: the same numbers.")
@click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False), help="Write the report to FILE instead of stdout.")
@click.option("--select", multiple=True, help="Rule ids, id prefixes or presets to enable (as for scan).")
@click.option("--extend-select", multiple=True, help="Rules to enable besides the selection (as for scan).")
@click.option("--ignore", multiple=True, help="Rules to disable: ids, prefixes, globs, names or families, as for --select.")
@click.option("--target", "targets", multiple=True, help="Targets to report: rocm,tpu,trainium,gaudi (default: the config's `targets`, else all four).")
@click.option("--jobs", "-j", type=click.IntRange(min=0), default=None, help="Worker processes (default: all cores; 1 = no workers).")
@click.option("--no-progress", is_flag=True, help="Never print progress on stderr.")
@click.option("--config", "config_path", type=click.Path(path_type=Path, dir_okay=False), help="Read settings from this pyproject.toml or portlint.toml.")
@click.option("--isolated", is_flag=True, help="Ignore configuration files.")
@click.option("--no-cache", is_flag=True, help="Do not read or write the result cache.")
@click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False), help="Where to keep the cache (default: .portlint_cache in the project root).")
@click.option("--compile-commands", type=click.Path(path_type=Path, dir_okay=False, exists=True), help="compile_commands.json for the libclang pass.")
@click.option("--follow-symlinks", is_flag=True, help="Scan through symlinks that lead out of the scanned tree.")
@click.option("--max-file-size", type=click.IntRange(min=1), help="Skip files larger than this many bytes.")
def report_cmd(paths, fmt, output, select, extend_select, ignore, targets, jobs, no_progress, config_path, isolated, no_cache, cache_dir,
               compile_commands, follow_symlinks, max_file_size) -> None:
    """Write a migration report of PATHS (default: .): per target, the verdict, the effort and
    where the work is. Exits 0 once the report is written (it is an audit, not a gate: use
    `scan` to fail a build), 2 on errors."""
    from portlint.core.config import ConfigError
    from portlint.core.catalog import RuleError

    paths = list(paths) or [Path(".")]
    with _usage_errors(ConfigError, RuleError):
        settings = _settings(paths, select, ignore, targets, config_path, isolated, no_cache, cache_dir, jobs,
                             compile_commands, follow_symlinks, max_file_size)
        _selection_options(settings, extend_select)
        if targets:
            settings.declared_targets = True

    from portlint.discovery.files import discover
    from portlint.pipeline.engine import scan_files
    from portlint.pipeline.workers import tune_gc

    tune_gc()
    try:
        files, notices = discover(paths, settings)
    except FileNotFoundError as exc:
        _fail(f"{exc}: no such file or directory")
    progress = None
    if not no_progress and sys.stderr.isatty() and len(files) > 200:
        def progress(done: int, total: int) -> None:
            if done == total or done % 50 == 0:
                click.echo(f"\rportlint: {done}/{total} files", err=True, nl=done == total)
    with _usage_errors(RuleError):
        result = scan_files(files, settings, progress)
    result.notices = sorted(notices + result.notices, key=lambda n: n.sort_key())
    for n in result.notices:
        click.echo(f"portlint: {_printable(n.path)}: {_printable(n.message)}", err=True)

    from portlint.output.report import render_report
    from portlint.output.report.summary import build_summary

    shown = tuple(p.as_posix() for p in paths)
    summary = build_summary(result, settings, [sf.display for sf in files], shown, __version__)
    text = render_report(fmt, summary)
    if output is not None:
        _write(text, output, [sf.real for sf in files])
        total = summary.total()
        click.echo(f"portlint: wrote {output} ({total.findings} findings, {total.points} effort points)", err=True)
    else:
        _out(text)
    sys.exit(EXIT_CLEAN)


@main.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules_cmd(fmt: str) -> None:
    """List every rule: id, name, severity per target, confidence, fix."""
    import json

    from portlint.core.catalog import RuleError, load_rules

    with _usage_errors(RuleError):
        rules = load_rules()
    if fmt == "json":
        doc = [
            {
                "id": r.id,
                "name": r.name,
                "family": r.family,
                "language": r.language,
                "summary": r.summary,
                "severity": {t: s.value for t, s in r.severity.items()},
                "confidence": r.confidence,
                "fix": r.fix,
                "default_enabled": r.default_enabled,
                "proof": r.proof,
                "effort": {"level": r.effort, "why": r.effort_why} if r.effort else None,
            }
            for r in rules.values()
        ]
        _out(json.dumps(doc, indent=2), nl=True)
        return
    width = max(len(r.name) for r in rules.values())
    _out(f"{'ID':<7} {'NAME':<{width}}  {'TARGETS':<44} {'CONF':<6} FIX", nl=True)
    for r in rules.values():
        sev = ", ".join(f"{t}:{s.value}" for t, s in r.severity.items())
        extra = "" if r.default_enabled else "  (opt-in)"
        _out(f"{r.id:<7} {r.name:<{width}}  {sev:<44} {r.confidence:<6} {r.fix}{extra}", nl=True)


@main.command("rule")
@click.argument("rule_id")
def rule_cmd(rule_id: str) -> None:
    """Print the documentation of RULE_ID (id or name)."""
    from portlint.core.catalog import load_rules

    rules = load_rules()
    wanted = rule_id.strip()
    for r in rules.values():
        if r.id == wanted.upper() or r.name == wanted:
            _out(r.markdown_doc())
            return
    _fail(f"no rule {rule_id!r} (see `portlint rules`)")


@main.command("init")
@click.argument("directory", required=False, type=click.Path(path_type=Path, file_okay=False, exists=True), default=Path("."))
@click.option("--print", "to_stdout", is_flag=True, help="Print the section instead of writing it.")
def init_cmd(directory: Path, to_stdout: bool) -> None:
    """Write a commented [tool.portlint] section for DIRECTORY (default: .), with the targets
    guessed from what the tree imports and builds for (read, never run): appended to its
    pyproject.toml, or a new portlint.toml when there is none. Refuses to touch a file that
    already configures portlint."""
    from portlint.core.config import ConfigError, Settings, find_config, load_config

    text = _init_section(directory)
    if to_stdout:
        _out(text)
        return
    pyproject, own = directory / "pyproject.toml", directory / "portlint.toml"
    with _usage_errors(ConfigError):
        existing = find_config(directory)
    if existing is not None and existing.parent.resolve() == directory.resolve():
        _fail(f"{existing} already configures portlint; edit it (or see `portlint init --print`)")
    target = pyproject if pyproject.is_file() else own
    try:
        before = read_bytes(target, OSError).decode("utf-8") if target.is_file() else ""
        sep = "" if not before else ("\n" if before.endswith("\n") else "\n\n")
        # through the one writer: atomic, never through a symlink, inside the directory
        write_file(target, (before + sep + text).encode("utf-8"), root=directory.resolve())
    except (OSError, UnicodeDecodeError, WriteRefused) as exc:
        _fail(f"cannot write {target}: {exc}")
    with _usage_errors(ConfigError):
        load_config(target, Settings())
    click.echo(f"portlint: wrote [tool.portlint] to {target}; edit the targets, then run `portlint scan`", err=True)


def _init_section(directory: Path) -> str:
    """The section `portlint init` writes: discovery's files under `directory` (gitignore and
    default excludes applied), their bytes read for the target guess."""
    from portlint.core.config import Settings
    from portlint.core.init_section import guess_targets, section_text
    from portlint.discovery.files import discover

    settings = Settings(root=directory.resolve())
    files, _ = discover([directory], settings)

    def contents():
        for sf in files:
            try:
                yield sf.display, read_limited(sf.real, settings.max_file_size)
            except OSError:  # unreadable, not a regular file or over max-file-size: as the scan skips it
                continue

    return section_text(guess_targets(contents()), __version__)


@main.command("server")
def server_cmd() -> None:
    """Run the Language Server over stdio, for editors (diagnostics, quick fixes, rule docs
    on hover; see docs/editors.md). Needs the `lsp` extra: pip install 'portlint[lsp]'."""
    try:
        from portlint.server.server import run_stdio
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in ("pygls", "lsprotocol", "cattrs"):
            raise
        _fail(f"the editor server needs pygls, which is not installed: pip install 'portlint[lsp]' ({exc})")
    run_stdio()


@main.command("suggest")
@click.argument("target", metavar="FILE::KERNEL")
@click.option("--to", "to", type=click.Choice(["pallas", "nki"]), required=True, help="Pallas (TPU) or NKI (Trainium) skeleton.")
def suggest_cmd(target: str, to: str) -> None:
    """Print a Pallas or NKI skeleton derived from the Triton kernel KERNEL in FILE."""
    import ast

    from portlint.rewrites.skeletons import SkeletonError, skeleton, triton_kernels

    path_text, sep, kernel = target.rpartition("::")
    if not sep or not path_text or not kernel:
        _fail(f"expected FILE::KERNEL, got {target!r}")
    path = Path(path_text)
    try:
        source = read_text(path, OSError)
    except OSError as exc:  # "cannot read FILE: why", or not UTF-8, or not a regular file
        _fail(str(exc))
    try:
        module = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        _fail(f"{path}: syntax error at line {exc.lineno}: {exc.msg}")
    except (RecursionError, MemoryError, ValueError) as exc:
        _fail(f"{path}: cannot parse ({type(exc).__name__}: too deeply nested or not Python text)")
    kernels = triton_kernels(module)
    if kernel not in kernels:
        known = ", ".join(kernels) or "none"
        _fail(f"{path} has no Triton kernel named {kernel!r} (kernels: {known})")
    with _usage_errors(SkeletonError):
        _out(skeleton(source, kernel, to, path.as_posix()))


if __name__ == "__main__":  # pragma: no cover
    main()
