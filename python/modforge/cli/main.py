"""The ``modforge`` command.

Exit codes, for every subcommand: 0 success, 1 a check failed (a result
disagrees with its oracle, a verification says no), 2 bad usage or bad input,
with one line on stderr naming the problem.  Numbers are read in decimal or
0x-hex; in JSON output every big integer is a 0x-prefixed lowercase hex
string.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from typing import Any

import click

from ..arith.base import ParameterError, require_modulus, require_seconds
from ..data import MAX_MODEL_BITS, check_model_bits, deterministic_modulus  # noqa: F401 - used by the groups
from ..inttext import brief, brief_text, parse_int

EXIT_CHECK_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
# What a shell reports for a program killed by SIGPIPE: the reader of our output went away (`| head`).
EXIT_BROKEN_PIPE = 141


# Number options are widths, counts and seeds: none comes near 2^256.  Past it a value is refused by its
# size, before each option's own range check would repeat all its digits (str() of one past 4300 raises).
MAX_OPTION_BITS = 256
COUNT_FORMS = "write N (decimal), 0xHEX or 2^K"


def parse_count(text: str, what: str, noun: str = "a number of squarings") -> int:
    """A count of squarings (t, --stop-after): ``parse_int``'s syntax, or a power of two ``2^K`` / ``2**K``
    with K <= 64.

    The range is the caller's to check; the text is refused here, naming ``noun``."""
    t = text.strip().replace(" ", "")
    for sep in ("**", "^"):
        if sep in t:
            base, _, exp = t.partition(sep)
            if base != "2":
                raise ParameterError(what, f"only powers of two may be written with {sep}: {brief_text(text)} "
                                           f"({COUNT_FORMS})")
            try:
                k = parse_int(exp, what)
            except ParameterError:
                # Name the whole text, not the part after the operator ('2^64-1' is no 2^K).
                raise ParameterError(what, f"not {noun}: {brief_text(text)} ({COUNT_FORMS})") from None
            if not 0 <= k <= 64:
                raise ParameterError(what, f"exponent out of range in {brief_text(text)}")
            return 1 << k
    return parse_int(t, what, expected=noun, forms=COUNT_FORMS)


class _Integer(click.ParamType):
    """An integer option in decimal or 0x-hex, like every number modforge reads."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        what = param.name if param is not None and param.name else "value"
        try:
            number = parse_int(str(value), what)
        except ParameterError as exc:
            self.fail(exc.problem, param, ctx)
        if number.bit_length() > MAX_OPTION_BITS:
            self.fail(f"{brief(number)} is out of range: number options (widths, counts, seeds) take at most "
                      f"{MAX_OPTION_BITS} bits", param, ctx)
        return number


class _Seconds(click.ParamType):
    """A positive, finite number of seconds (click's float takes nan and inf)."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        try:
            return require_seconds("seconds", seconds)
        except ParameterError as exc:
            self.fail(exc.problem, param, ctx)


INTEGER = _Integer()
SECONDS = _Seconds()


def describe_os_error(exc: OSError) -> str:
    """``"cannot write 'out/x.json': Permission denied"``-style text for an OSError."""
    reason = exc.strerror or str(exc)
    if exc.filename is not None:
        return f"{str(exc.filename)!r}: {reason}"
    return reason


def hexint(value: int) -> str:
    return hex(value)


def jsonable(obj: Any) -> Any:
    """Big integers -> 0x-hex strings, recursively (small counts stay numbers only where safe)."""
    if isinstance(obj, bool) or obj is None or isinstance(obj, (float, str)):
        return obj
    if isinstance(obj, int):
        return hex(obj)
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    return str(obj)


def counts(obj: dict[str, Any]) -> dict[str, Any]:
    """Cost/event dictionaries are small counts: keep them as JSON numbers."""
    out: dict[str, Any] = {}
    for k, v in obj.items():
        out[k] = counts(v) if isinstance(v, dict) else (list(v) if isinstance(v, tuple) else v)
    return out


# The largest integer a --opt value may have (a width, a count): room above every model's own bounds.
MAX_OPTION_VALUE = 4 * MAX_MODEL_BITS
# One modmul's work: a 16384-bit modulus in 4-bit words is 2^24 products (each a Python operation).
MAX_MODMUL_WORD_PRODUCTS = 1 << 24


# Subcommand groups that live in their own modules, imported only when used
# (so `modforge algos` never loads the VDF, time-lock or benchmark code).
LAZY_SUBCOMMANDS = {
    "vdf": "modforge.cli.vdf:vdf",
    "timelock": "modforge.cli.timelock:timelock",
    "bench": "modforge.cli.bench:bench",
    "hw": "modforge.cli.hw:hw",
    "rsa": "modforge.cli.rsa:rsa",
    "cache": "modforge.cli.cache:cache",
    "msm": "modforge.cli.msm:msm",
    "ntt": "modforge.cli.ntt:ntt",
}


def _stdout_is_broken() -> bool:
    """Whether standard output is a pipe whose reader has gone (poll reports an error on it).  Without a
    descriptor to ask (an in-process runner), a broken pipe can only have been ours: True."""
    import select

    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError, AttributeError):
        return True
    try:
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):        # no poll() here: assume it was stdout
        return True


class ErrorExitGroup(click.Group):
    """A command group that turns known exceptions into one stderr line and an exit code.

    Every group (the top level and each subcommand group) uses it, so a group
    behaves the same run alone (tests) and under ``modforge``.
    """

    def exit_codes(self) -> list[tuple[type[BaseException], int, str]]:
        """(exception type, exit code, message prefix), first match wins."""
        return [(ParameterError, EXIT_BAD_INPUT, "error: ")]

    @staticmethod
    def _usage_error(exc: click.UsageError, fallback: str) -> click.exceptions.Exit:
        # One line, as for every other bad input (click's own form is four).
        where = exc.ctx.command_path if exc.ctx is not None else fallback
        click.echo(f"modforge: error: {exc.format_message()} (see '{where} --help')", err=True)
        return click.exceptions.Exit(exc.exit_code)

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:
            raise self._usage_error(exc, info_name or "modforge") from None
        except BrokenPipeError as exc:
            # --help and --version print while the arguments are parsed, before invoke's handlers.
            raise _broken_pipe_exit(exc) from None
        except OSError as exc:
            click.echo(f"modforge: error: {describe_os_error(exc)}", err=True)
            raise click.exceptions.Exit(EXIT_BAD_INPUT) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.NoArgsIsHelpError):
            raise
        except click.UsageError as exc:
            # The subcommand whose arguments failed to parse (click sets no context for some such errors).
            where = f"{ctx.command_path} {ctx.invoked_subcommand}" if ctx.invoked_subcommand else ctx.command_path
            raise self._usage_error(exc, where) from None
        except SystemExit as exc:
            # rich's consoles end the process with status 1 when their reader goes away (after pointing
            # stdout at /dev/null): the same event as below, so the same exit status.
            if isinstance(exc.__context__, BrokenPipeError) and exc.code == 1:
                ctx.exit(EXIT_BROKEN_PIPE)
            raise
        except BrokenPipeError as exc:
            raise _broken_pipe_exit(exc) from None
        except KeyboardInterrupt:
            # A second Ctrl-C, or one outside a command that checkpoints: not a failed check.
            click.echo("modforge: interrupted", err=True)
            ctx.exit(EXIT_INTERRUPTED)
        except Exception as exc:
            for kind, code, prefix in self.exit_codes():
                if isinstance(exc, kind):
                    click.echo(f"modforge: {prefix}{exc}", err=True)
                    ctx.exit(code)
            from ..hw.errors import missing_toolchain     # no toolchain import: only names

            missing = missing_toolchain(exc)
            if missing is not None:
                click.echo(f"modforge: error: {missing}", err=True)
                ctx.exit(EXIT_BAD_INPUT)
            if isinstance(exc, OSError):
                # A file we were told to read or write cannot be: bad input, named, not a traceback.
                click.echo(f"modforge: error: {describe_os_error(exc)}", err=True)
                ctx.exit(EXIT_BAD_INPUT)
            raise


def _broken_pipe_exit(exc: BrokenPipeError) -> click.exceptions.Exit:
    """The exit for a broken pipe: 141 when the reader of our output went away, else a failure."""
    if not _stdout_is_broken():
        # Another pipe (a helper process, stderr): a failure like any other OSError.
        click.echo(f"modforge: error: {describe_os_error(exc)}", err=True)
        return click.exceptions.Exit(EXIT_BAD_INPUT)
    # The reader of our output went away (`| head`): nothing is wrong and nobody is listening.
    # stdout goes to /dev/null so that the interpreter's final flush does not complain either.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError):
        pass
    return click.exceptions.Exit(EXIT_BROKEN_PIPE)


class ModforgeGroup(ErrorExitGroup):
    """The top level: subcommand groups imported lazily."""

    def _lazy(self, name: str) -> click.Command | None:
        target = LAZY_SUBCOMMANDS.get(name)
        if target is None:
            return None
        import importlib
        import importlib.util

        module_name, _, attr = target.partition(":")
        if importlib.util.find_spec(module_name) is None:
            return None
        return getattr(importlib.import_module(module_name), attr)

    def list_commands(self, ctx: click.Context) -> list[str]:
        import importlib.util

        lazy = [n for n, t in LAZY_SUBCOMMANDS.items() if importlib.util.find_spec(t.partition(":")[0]) is not None]
        return sorted(set(super().list_commands(ctx)) | set(lazy))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, cmd_name) or self._lazy(cmd_name)


@click.group(cls=ModforgeGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="modforge", prog_name="modforge")
def cli() -> None:
    """modforge: bit-exact models, generated hardware and a fast native engine for modular arithmetic."""


def _parse_options(pairs: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise ParameterError("opt", f"expected KEY=VALUE, got {pair!r}")
        key, value = pair.split("=", 1)
        key = key.strip().replace("-", "_")
        if not key.isidentifier():
            raise ParameterError("opt", f"{key!r} is not an option name (KEY=VALUE, KEY a word such as word_bits)")
        parsed: Any
        if value.strip().lower() in ("true", "false"):
            # A switch: "False" as a string would be truthy, the opposite of what was asked.
            parsed = value.strip().lower() == "true"
        else:
            try:
                parsed = parse_int(value, key)
            except ParameterError:
                parsed = value
        if key in out and out[key] != parsed:
            # Silently keeping the last one would build a design the user did not ask for.
            raise ParameterError("opt", f"{key} given twice, {brief(out[key])} and {brief(parsed)}: give it once")
        out[key] = parsed
    return out


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list, one object per algorithm.")
@click.option("--bits", type=INTEGER, default=1024, show_default=True,
              help="Width at which to show each model's cost (1024 uses the VDF Alliance modulus).")
def algos(as_json: bool, bits: int) -> None:
    """List every algorithm with its seed reference and cost model."""
    from ..arith.registry import all_algorithms
    from ..arith.seeds import sources
    from ..data import vdf_alliance_modulus

    modulus = vdf_alliance_modulus() if bits == 1024 else deterministic_modulus(bits)   # which checks the width
    rows = []
    for info in all_algorithms():
        model = info.build(modulus)
        rows.append({"name": info.name, "family": info.family, "kind": info.kind, "seed": info.seed,
                     "sources": sources(info.seed),
                     "summary": info.summary, "cost_formula": info.cost_formula,
                     "options": info.options, "cost_at_bits": bits, "cost": counts(model.cost().as_dict())})
    if as_json:
        click.echo(json.dumps(rows, indent=1))
        return
    from rich.console import Console
    from rich.table import Table

    from rich import box
    from rich.markup import escape

    from .layout import hanging, terminal_width

    console = Console()
    width = terminal_width()
    for r in rows:
        head = hanging(f"{r['name']}  ", f"({r['family']}, {r['kind']})  {r['summary']}", width, indent=4)
        name, _, rest = head.partition("  ")
        console.print(f"[bold]{escape(name)}[/bold]  {escape(rest)}", highlight=False)
        console.print(escape(hanging("    seed        ", str(r["seed"]), width)), highlight=False)
        for source in r["sources"]:
            console.print(escape(hanging("    source      ", source, width)), highlight=False)
        console.print(escape(hanging("    cost model  ", r["cost_formula"], width)), highlight=False)
    # Short headers and a light box: the widest row fits 80 columns whole.
    table = Table(title=f"cost at {bits} bits", box=box.SIMPLE_HEAD)
    for col in ("name", "family", "products", "tables", "tree"):
        table.add_column(col, no_wrap=True)
    for r in rows:
        c = r["cost"]
        tables = f"{c['table_count']} x 2^{c['table_entries'].bit_length() - 1} x {c['table_entry_bits']}b" \
            if c["table_count"] else "-"
        table.add_row(r["name"], r["family"], f"{c['word_products']} x {c['product_bits']}b", tables,
                      str(c["adder_tree_inputs"] or "-"))
    console.print(table)


@cli.command()
@click.option("--algo", "algo_name", required=True, help="Algorithm name (see `modforge algos`).")
@click.option("--modulus", "modulus_text", help="Modulus, decimal or 0x-hex.")
@click.option("--bits", type=INTEGER, help="Instead of --modulus: a reproducible modulus of this many bits.")
@click.option("--seed", type=INTEGER, default=0, show_default=True, help="Seed for --bits.")
@click.option("--opt", "opts", multiple=True, metavar="KEY=VALUE", help="Algorithm option (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.argument("a_text", metavar="A")
@click.argument("b_text", metavar="B")
def modmul(algo_name: str, modulus_text: str | None, bits: int | None, seed: int, opts: tuple[str, ...],
           as_json: bool, a_text: str, b_text: str) -> None:
    """Compute A*B mod N with one model; print the result, its internal form and its cost."""
    from ..arith import registry
    from ..arith.base import value_of

    info = registry.get(algo_name)
    if (modulus_text is None) == (bits is None):
        raise ParameterError("modulus", "give exactly one of --modulus N or --bits N")
    modulus = parse_int(modulus_text, "modulus") if modulus_text is not None else \
        deterministic_modulus(bits, seed, odd=True)
    if modulus.bit_length() > MAX_MODEL_BITS:
        raise ParameterError("modulus", f"is {modulus.bit_length()} bits wide; the models take at most "
                                        f"{MAX_MODEL_BITS}")
    modulus = require_modulus(modulus)
    a = parse_int(a_text, "a")
    b = parse_int(b_text, "b")
    options = _parse_options(opts)
    for key, value in options.items():
        # Sizes far past any model's range would only exhaust memory or time before a model refused them.
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_OPTION_VALUE:
            raise ParameterError("opt", f"{key}={brief(value)}: at most {MAX_OPTION_VALUE} in absolute value "
                                        f"(the models take moduli of up to {MAX_MODEL_BITS} bits)")
    try:
        model = info.build(modulus, **options)
    except TypeError as exc:
        # The parameter classes name what they do not take; say it as bad input, with the documented options.
        m = re.search(r"unexpected keyword argument '(\w+)'", str(exc))
        if m is None:
            raise
        known = ", ".join(info.options) or "none"
        raise ParameterError("opt", f"{m.group(1)!r} is not an option of {info.name}; its options: {known} "
                                    f"(docs/algorithms.md)") from None
    products = model.cost().word_products
    if products > MAX_MODMUL_WORD_PRODUCTS:
        raise ParameterError("opt", f"this {info.name} takes {products} word products per operation; a model "
                                    f"runs in Python, so modmul takes at most {MAX_MODMUL_WORD_PRODUCTS}")
    outcome = model.modmul(a, b)
    expected = a * b % modulus
    ok = outcome.result == expected
    doc: dict[str, Any] = {
        "algo": info.name, "kind": info.kind, "modulus": hexint(modulus), "a": hexint(a), "b": hexint(b),
        "result": hexint(outcome.result), "raw": hexint(outcome.raw),
        "redundant": outcome.raw != outcome.result, "redundant_bound": hexint(model.redundant_bound),
        "oracle_agrees": ok, "cost": counts(model.cost().as_dict()), "events": counts(outcome.events),
        "stages": jsonable(outcome.stages),
    }
    if outcome.digits is not None:
        doc["digits"] = jsonable(list(outcome.digits))
        doc["digit_bits"] = outcome.digit_bits
        doc["digit_weight_bits"] = outcome.digit_weight_bits
        if value_of(outcome.digits, outcome.digit_weight_bits) != outcome.raw:
            ok = False
            doc["oracle_agrees"] = False
    if as_json:
        click.echo(json.dumps(doc, indent=1))
    else:
        click.echo(f"algorithm   {info.name} ({info.family}; {info.seed})")
        if info.kind == "multiplier":
            click.echo("note        a plain multiplier: the residue is the oracle's reduction of its product")
        click.echo(f"modulus     {hexint(modulus)} ({modulus.bit_length()} bits)")
        click.echo(f"result      {hexint(outcome.result)}")
        if outcome.raw != outcome.result:
            click.echo(f"raw         {hexint(outcome.raw)} (redundant; bound {model.redundant_bound.bit_length()} bits)")
        if outcome.digits is not None:
            shown = ", ".join(hex(x) for x in outcome.digits[:8])
            more = f", ... ({len(outcome.digits)} digits)" if len(outcome.digits) > 8 else ""
            click.echo(f"digits      [{shown}{more}] of {outcome.digit_bits} bits at 2^({outcome.digit_weight_bits}i)")
        cost = model.cost().as_dict()
        click.echo(f"cost        {cost['word_products']} word products of {cost['product_bits']} bits"
                   + (f", {cost['table_count']} tables x {cost['table_entries']} x {cost['table_entry_bits']} bits"
                      if cost["table_count"] else "")
                   + (f", adder tree {cost['adder_tree_inputs']} inputs" if cost["adder_tree_inputs"] else ""))
        if outcome.events:
            click.echo("events      " + ", ".join(f"{k}={v}" for k, v in outcome.events.items()))
        click.echo(f"oracle      {'agrees' if ok else 'DISAGREES'}")
    if not ok:
        click.echo(f"modforge: error: {info.name} disagrees with the oracle a*b mod m", err=True)
        sys.exit(EXIT_CHECK_FAILED)


@cli.command()
@click.option("--models", is_flag=True, help="Tour the bit-exact models instead of the main job.")
@click.option("--duration", default="20s", show_default=True, help="Puzzle solving time on this machine.")
@click.option("--bits", type=INTEGER, default=2048, show_default=True, help="Puzzle modulus width.")
def demo(models: bool, duration: str, bits: int) -> None:
    """The main job on built-in defaults: create, solve, prove and verify a puzzle; our speed next to GMP's."""
    from .demo import run_main_job, run_model_tour

    if models:
        given = [f"--{name}" for name in ("duration", "bits")
                 if click.get_current_context().get_parameter_source(name) != click.core.ParameterSource.DEFAULT]
        if given:
            raise ParameterError(given[0].lstrip("-"), "does not go with --models (the tour has fixed sizes)")
        sys.exit(run_model_tour())
    # Checked here, before the banner and the puzzle's key: bad values are bad input (2), not a failed run.
    from ..timelock.create import MAX_BITS, MIN_BITS
    from ..timelock.durations import parse_duration

    parse_duration(duration)
    if not MIN_BITS <= bits <= MAX_BITS:
        raise ParameterError("bits", f"must be between {MIN_BITS} and {MAX_BITS}, got {bits}")
    sys.exit(run_main_job(duration, bits))


def _terminated(signum, frame) -> None:
    # SIGTERM unwinds like Ctrl-C: temporary directories and lock files are cleaned up on the way out
    # (commands that checkpoint install their own handler while they run).
    raise KeyboardInterrupt


def main() -> None:
    signal.signal(signal.SIGTERM, _terminated)
    cli(prog_name="modforge")


if __name__ == "__main__":
    main()
