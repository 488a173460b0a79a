"""Which cell line each generated CUDA line came from, repairing TileLang's ``#line`` directives.

Capture computes the :class:`~tilelab.records.SourceMap` once and stores it in the
record's source, so the Explorer, the side panel, the CLI and ``tilelab.load`` all
read one map; :func:`source_map_of` computes it for a record saved before it was kept
(format 5 and older) or built by hand.

TileLang emits ``#line`` only where a statement's span changes, and statements
that transforms create without a span (pipeline loops, barriers, the
warp-specialised producer) inherit whatever directive came last; tile ops that
expand through TileLang's Python macros (``T.gemm``, ``T.reduce_*``) point into
TileLang's own files. So on sm_90 the TMA producer loop maps to ``def gemm``
and the wgmma block to ``T.clear``, and ``T.gemm`` never links.

The repair works on the structure of the CUDA and of the cell:

1. *strong* lines: a ``tl::`` template call names its op family (``wgmma_ss``,
   ``mma_sync``, ``ldmatrix`` → gemm; ``tma_load``, ``cp_async_gs`` → copy;
   ``AllReduce<MaxOp>`` → reduce_max or a reducer's ``T.finalize_reducer`` ...)
   and its operands name the buffers, matched to the cell's ``T.gemm`` /
   ``T.copy`` / ``T.reduce_*`` calls; a declaration of a buffer the cell
   allocates links to that allocation, of a reduce's scratch (``<dst>_clear``,
   for ``clear=False``) to that reduce, and of an in-place ``T.finalize_reducer``'s
   (``<buf>_result``) to it, as does the store into it;
2. a directive is trusted where it was emitted and for the simple statements
   after it in the same block, never for loops, branches or barriers that
   merely inherited it, and never when it points outside the cell or at a ``def``;
   a statement no directive is trusted for (and whose inherited one names none of
   its buffers) links by its operands where they name one op: a constant stored
   into a buffer to the one ``T.clear`` / ``T.fill`` /
   ``T.reducer_init`` of it, a statement over two or more of the cell's buffers
   to the one op over all of them (``T.finalize_reducer(acc, dst)``'s copy);
   a statement whose directive is a ``T.Parallel`` loop's links to the statement
   of that loop's body naming all the cell buffers it touches, where one does
   (``T.reducer_update(acc[i], tile[i, j])``);
3. a block (``for``, ``if``, ``{``) whose trusted lines all come from one op
   belongs to that op; a loop holding several ops, or barriers, belongs to the
   cell loop (``T.Pipelined`` ...) that holds them all, except a reduce's own
   loop (its ``AllReduce`` brings the barrier), which is the reduce's;
4. an ``if``/``else`` whose own directive is that of the directive-linked
   statements right before and after it takes that line (a ``T.if_then_else``'s
   predicated load); untrusted simple lines take their block's op, barriers their
   pipeline's loop or the op beside them; where the cell has one ``T.Pipelined``
   loop, its barrier set-up on sm_90 (``mbarrier_mem``, the ``init`` block,
   ``fence_barrier_init``) is that loop's; ``}`` closes with its opener,
   ``#pragma`` goes with the next line.

Lines that end up with no op (the kernel's prologue, the warp-specialisation
branches, whose warps drain there after their exit) stay unlinked, and the view says so.

Every step reads the same block tree of the CUDA (:mod:`tilelab.cuda_blocks`) and the same
ops of the cell (:mod:`tilelab.cell_ops`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace

from tilelab.cell_ops import CellOp, cell_ops
from tilelab.cuda_blocks import CudaBlocks
from tilelab.records import CellLink, FoundThrough, SourceMap, SourceRecord, TileOp

__all__ = ["build_source_map", "source_map_of", "with_source_map"]

# tl:: templates and what they belong to; operands are matched to buffers separately.
_TEMPLATE = re.compile(r"\btl::(\w+)")
_TEMPLATE_FAMILY = [
    (re.compile(r"^(gemm_\w+|wgmma\w*|mma\w*|ptx_ldmatrix\w*|ldmatrix\w*|initialize_\w*descriptor|GmmaDescriptor|"
                r"increase_descriptor_offset|warpgroup_arrive|warpgroup_commit_batch|warpgroup_wait|"
                r"warpgroup_fence_operand|tcgen05\w*|utcmma\w*)$"), "gemm"),
    (re.compile(r"^(tma_load\w*|tma_store|cp_async_gs\w*|ptx_stmatrix\w*|prefetch_tma_descriptor|cp_async_bulk\w*)$"), "copy"),
    (re.compile(r"^(AllReduce|CumSum\w*|reduce\w*|\w+Reducer)$"), "reduce"),
]  # fmt: skip
_REDUCE_KIND = {"MaxOp": "reduce_max", "MinOp": "reduce_min", "SumOp": "reduce_sum", "AbsMaxOp": "reduce_absmax"}
_REDUCER_OPS = {"finalize_reducer"}  # its combine op (sum, max...) is named at alloc_reducer: any AllReduce may be its
# An assignment: what it stores into, a compound operator's (+= ...; never ==, <=, >=, !=), what it stores.
_ASSIGNMENT = re.compile(r"^(?P<target>[^=]*?[^=<>!+\-*/%&|^])\s*(?P<compound>[-+*/%&|^]|<<|>>)?=(?!=)(?P<value>.*)$")
_DECLARED = re.compile(
    r"^\s*(?:extern\s+)?(?:__shared__\s+)?(?:__align__\(\d+\)\s+)?(?:(?:signed|unsigned|long|short|const|volatile)\s+)*"
    r"[\w:<>]+[\s*]+(\w+)\s*(?:\[[^\]]*\])?\s*(?:=|;)"
)
_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
# A pipelined loop's stage barriers on sm_90: their shared array, their initialisation and its fence. (The
# warp-specialisation branches stay the kernel's as a whole: warps drain there after their exit.)
_BARRIER_SETUP = re.compile(r"\bmbarrier|\btl::fence_barrier_init\b")
# TileLang's scratch buffers, made unique: a ReduceOp's dst + "_clear"; an in-place T.finalize_reducer's buf + "_result".
_SCRATCH = re.compile(r"^(\w+)_(clear|result)(?:_\d+)?$")


class _Attribution:
    def __init__(self, source: SourceRecord) -> None:
        near = {link.line for link in source.line_links if link.file == source.kernel_file}
        self.ops = cell_ops(source.kernel_source, near)
        untrusted = {n for n, text in enumerate(source.kernel_source.splitlines(), start=1) if text.lstrip().startswith(("def ", "async def ", "@"))}
        self.cuda = CudaBlocks(source, untrusted)
        self.allocs = {b: op.line for op in self.ops.values() if op.family == "alloc" for b in op.buffers}
        self.buffers = {b for op in self.ops.values() for b in op.buffers}
        self.in_body: set[int] = set()  # device-code lines linked into a T.Parallel body rather than to its loop
        self.pipelined = [op.line for op in self.ops.values() if op.name == "Pipelined"]
        self.cell = source.kernel_source.splitlines()

    # -- strong lines: tl:: templates and buffer declarations ---------------------
    def template_op(self, number: int, previous: int | None) -> int | None:
        text = self.cuda.lines[number].text
        names = _TEMPLATE.findall(text)
        family = next((fam for name in names for pattern, fam in _TEMPLATE_FAMILY if pattern.match(name)), None)
        if family is None:
            return None
        candidates = [op for op in self.ops.values() if op.family in ("gemm", "copy", "reduce")]
        if family == "reduce" and (kinds := {_REDUCE_KIND[n] for n in names if n in _REDUCE_KIND}):
            candidates = [op for op in candidates if op.family != "reduce" or op.name in kinds | _REDUCER_OPS]
        words = set(_IDENT.findall(text))
        words |= {word[: -len("_desc")] for word in words if word.endswith("_desc")}  # TMA descriptors: <buffer>_desc

        def score(op: CellOp) -> tuple[int, bool]:
            return len(words & set(op.buffers)), op.family == family

        best = max(candidates, key=score, default=None)
        if best is not None and score(best)[0] > 0:
            direct = self.cuda.lines[number].direct
            tied = [op for op in candidates if score(op) == score(best)]
            return min(tied, key=lambda op: (abs(op.line - direct) if direct else 0, op.line)).line
        same = [op for op in candidates if op.family == family]
        if len(same) == 1:
            return same[0].line
        # No operand names it (``warpgroup_arrive()``): the op of the template line before it, if of this family.
        if previous is not None and self.ops[previous].family == family:
            return previous
        return None

    def declared_op(self, number: int) -> int | None:
        """A declared buffer's op: the cell's allocation of it, or the one op whose scratch it is."""
        match = _DECLARED.match(self.cuda.lines[number].text)
        name = match.group(1) if match else ""
        return self.allocs[name] if name in self.allocs else self.scratch_op(name)

    def scratch_op(self, name: str) -> int | None:
        """The one op whose scratch buffer ``name`` is: a reduce's ``<dst>_clear``, a finalize's ``<buf>_result``."""
        if name in self.allocs or not (scratch := _SCRATCH.match(name)):
            return None
        buffer, kind = scratch.groups()
        ops = [op.line for op in self.ops.values() if op.family == "reduce" and buffer in op.buffers
               and (op.name == "finalize_reducer") == (kind == "result")]  # fmt: skip
        return ops[0] if len(ops) == 1 else None

    def assignment(self, number: int) -> tuple[set[str], set[str], bool, int | None] | None:
        """For a statement that assigns: the cell's buffers it stores into, those it reads, whether compound (+=),
        and the one op whose scratch buffer it stores into (None: none)."""
        line = self.cuda.lines[number]
        match = _ASSIGNMENT.match(line.text.strip().rstrip(";"))
        if line.kind != "stmt" or match is None:
            return None
        stored = set(_IDENT.findall(match["target"]))
        scratch = {op for name in stored if (op := self.scratch_op(name)) is not None}
        values = set(_IDENT.findall(match["value"])) & self.buffers
        return stored & self.buffers, values, bool(match["compound"]), scratch.pop() if len(scratch) == 1 else None

    def operand_op(self, number: int) -> int | None:
        """The one op that a statement's buffers name, where its ``#line`` does not: a store into an op's scratch
        buffer, that op; a constant stored into a buffer, its fill; a statement over two or more of the cell's
        buffers, the op over all of them."""
        line, assignment = self.cuda.lines[number], self.assignment(number)
        if assignment is None:
            return None
        targets, values, compound, scratch = assignment
        if scratch is not None:
            return scratch  # a store into an op's scratch buffer (a finalize's copy of its result)
        if line.direct is not None and set(_IDENT.findall(self.cell[line.direct - 1])) & (targets | values):
            return None  # its #line, even inherited, names these buffers: a store the cell wrote itself, say
        if len(targets) == 1 and not values and not compound:
            found = [op for op in self.ops.values() if op.family == "fill" and targets <= set(op.buffers)]
        elif len(targets | values) >= 2:
            found = [op for op in self.ops.values() if op.family not in ("loop", "alloc") and targets | values <= set(op.buffers)]
        else:
            return None
        return found[0].line if len(found) == 1 else None

    def body_statement(self, number: int) -> int | None:
        """Where ``#line`` gives statement ``number`` to a ``T.Parallel`` loop: the line of the loop's body it came
        from, the one naming all the cell buffers it touches (of several, the one storing into the same buffer)."""
        loop, assignment = self.ops.get(self.cuda.lines[number].direct), self.assignment(number)
        if loop is None or not loop.statements or assignment is None:
            return None
        stored, read, _, _ = assignment
        touched = stored | read
        found = [statement for statement in loop.statements if touched and touched <= statement.names]
        if len(found) > 1:  # more than one names them all: the one storing where it stores
            found = [statement for statement in found if stored and statement.targets == stored]
        return found[0].line if len(found) == 1 else None

    def seeds(self) -> dict[int, tuple[int, str]]:
        seeds: dict[int, tuple[int, str]] = {}
        previous = None
        for number, line in self.cuda.lines.items():
            if line.kind in ("blank", "close"):
                continue
            if (op := self.template_op(number, previous)) is not None:
                seeds[number] = (op, "template")
                previous = op
            elif (op := self.declared_op(number)) is not None:
                seeds[number] = (op, "declaration")
            elif line.direct is not None and (self.cuda.fresh(number) or (line.kind in ("stmt", "sync") and self.cuda.trusted(number))):
                if (body := self.body_statement(number)) is not None:
                    seeds[number] = (body, "operand")
                    self.in_body.add(number)
                else:
                    seeds[number] = (line.direct, "directive")
            elif (op := self.operand_op(number)) is not None:
                seeds[number] = (op, "operand")
        return seeds

    # -- blocks -------------------------------------------------------------------
    def enclosing_loop(self, cell_lines: set[int]) -> int | None:
        """The innermost cell loop whose body holds every line of ``cell_lines`` (a loop holds itself)."""
        loops = [op for op in self.ops.values() if op.family == "loop" and all(op.line <= c <= op.end for c in cell_lines)]
        return max(loops, key=lambda op: op.line).line if loops else None

    def block(self, opener: int, seeds: dict[int, tuple[int, str]]) -> tuple[int, str] | None:
        """The op a block belongs to, from the strong lines inside it."""
        inside = [n for n in self.cuda.inside(opener) if n in seeds]
        ops = {self.cuda.lines[n].direct if n in self.in_body else seeds[n][0] for n in inside}  # a body's: its loop's
        if not ops:
            return None
        loop = self.cuda.is_loop(opener)
        barriers = any(self.cuda.lines[n].kind == "sync" for n in self.cuda.children.get(opener, ()))
        if len(ops) == 1 and not (loop and barriers):
            return next(iter(ops)), "block"
        if len(ops) == 1 and self.ops[next(iter(ops))].family == "reduce":
            return next(iter(ops)), "block"  # a reduce's own loop: its AllReduce brings the barrier
        if loop and (cell_loop := self.enclosing_loop(ops)) is not None:
            return cell_loop, "pipeline"
        return None

    def sandwiched(self, opener: int, resolved: dict[int, tuple[int, str]]) -> list[int]:
        """An ``if`` (its ``else`` too) whose own ``#line`` is that of the statements right before and after it, both
        linked by that directive (TileLang's predicated load of a ``T.if_then_else``, say): the chain's openers."""
        chain, line = [opener], self.cuda.lines[opener]
        while (end := self.cuda.close_of.get(chain[-1])) is not None and self.cuda.lines[end].kind == "reopen":
            chain.append(end)
        siblings = self.cuda.children[line.parent]
        if line.direct is None or end is None or end not in siblings:
            return []
        around = []
        for at, step in ((siblings.index(opener), -1), (siblings.index(end), 1)):
            at += step
            while 0 <= at < len(siblings) and self.cuda.lines[siblings[at]].kind in ("pragma", "blank"):
                at += step
            around.append(resolved.get(siblings[at]) if 0 <= at < len(siblings) else None)
        return chain if around[0] == around[1] == (line.direct, "directive") else []

    def loop_of_barrier(self, number: int, resolved: dict[int, tuple[int, str]]) -> int | None:
        """The cell loop of the innermost CUDA ``for`` around a barrier, if that ``for`` is one."""
        for ancestor in self.cuda.ancestors(number):
            if self.cuda.is_loop(ancestor):
                cell = resolved.get(ancestor, (None, ""))[0]
                return cell if cell in self.ops and self.ops[cell].family == "loop" else None
        return None

    def barrier_setup(self, number: int) -> int | None:
        """The kernel's one ``T.Pipelined`` loop, for a line that sets up its barriers or a block of nothing else."""
        if len(self.pipelined) != 1:
            return None
        line = self.cuda.lines[number]
        if line.kind not in ("open", "reopen"):
            return self.pipelined[0] if _BARRIER_SETUP.search(line.text) else None
        inside = [self.cuda.lines[n].text for n in self.cuda.children.get(number, ()) if self.cuda.lines[n].kind not in ("blank", "pragma", "close")]
        return self.pipelined[0] if inside and all(_BARRIER_SETUP.search(text) for text in inside) else None

    def beside(self, number: int, resolved: dict[int, tuple[int, str]]) -> int | None:
        """The op of the nearest statement beside a barrier in its block (after it, then before it)."""
        siblings = self.cuda.children[self.cuda.lines[number].parent]
        at = siblings.index(number)
        for direction in (1, -1):
            k = at + direction
            while 0 <= k < len(siblings) and self.cuda.lines[siblings[k]].kind in ("sync", "pragma", "blank"):
                k += direction
            if 0 <= k < len(siblings):
                other = siblings[k]
                other = self.cuda.lines[other].opener or other
                if other in resolved:
                    return resolved[other][0]
        return None

    def run(self) -> SourceMap:
        lines = self.cuda.lines
        seeds = self.seeds()
        resolved = dict(seeds)
        for number, line in lines.items():  # blocks, by what they hold
            if number not in resolved and line.kind in ("open", "reopen"):
                if self.cuda.fresh(number):
                    resolved[number] = (line.direct, "directive")
                elif (found := self.block(number, seeds)) is not None:
                    resolved[number] = found
        barriers = []
        for number, line in lines.items():  # the rest, outside in
            if number in resolved or line.kind in ("blank", "pragma", "close"):
                continue
            if line.kind == "sync":
                if (loop := self.loop_of_barrier(number, resolved) or self.barrier_setup(number)) is not None:
                    resolved[number] = (loop, "pipeline")
                else:
                    barriers.append(number)
            elif self.cuda.trusted(number):
                resolved[number] = (line.direct, "directive")
            elif line.kind == "open" and (chain := self.sandwiched(number, resolved)):
                resolved.update(dict.fromkeys(chain, (line.direct, "directive")))
            elif (loop := self.barrier_setup(number)) is not None:
                resolved[number] = (loop, "pipeline")
            elif line.parent in resolved:
                resolved[number] = (resolved[line.parent][0], "block")
        for number in barriers:
            if (op := self.beside(number, resolved)) is not None:
                loop = self.enclosing_loop({op})
                pipelined = loop is not None and self.ops[loop].name == "Pipelined"
                resolved[number] = (loop, "pipeline") if pipelined else (op, "block")
        for number, line in lines.items():  # a closing brace goes with its block
            if line.kind == "close" and line.opener in resolved:
                resolved[number] = resolved[line.opener]
        for number in sorted(lines, reverse=True):  # a pragma goes with the line after it
            if lines[number].kind == "pragma" and number + 1 in resolved:
                resolved[number] = resolved[number + 1]
        return SourceMap(
            links=tuple(CellLink(number, cell, FoundThrough(how)) for number, (cell, how) in sorted(resolved.items())),
            ops=tuple(TileOp(line, op.name) for line, op in sorted(self.ops.items())),
        )


def build_source_map(source: SourceRecord) -> SourceMap:
    """The repaired CUDA → cell line links of ``source`` (see the module docstring)."""
    return _Attribution(source).run()


def with_source_map(source: SourceRecord) -> SourceRecord:
    """``source`` carrying its map (capture stores it once, with the record)."""
    return replace(source, source_map=build_source_map(source))


def source_map_of(source: SourceRecord) -> SourceMap:
    """``source``'s map: the one stored at capture, else (a record of format 5 or older, or built by hand) computed
    once and kept for the next tab that asks."""
    return source.source_map if source.source_map is not None else _built_map(source)


@functools.lru_cache(maxsize=16)
def _built_map(source: SourceRecord) -> SourceMap:
    return build_source_map(source)
