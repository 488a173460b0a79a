"""The Explorer's Passes tab: :mod:`.data` shapes its JSON (the pass rows, and the diffs, IRs and IR search the
browser asks for); :mod:`.snapshot` renders that JSON as script-free HTML; ``src/widgets/passes.ts`` draws it live."""
