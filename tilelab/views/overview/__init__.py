"""The Explorer's Overview tab: :mod:`.data` shapes its JSON (facts about the compile as label/value rows, and the
error of a failed one); :mod:`.snapshot` renders that JSON as script-free HTML; ``src/widgets/overview.ts`` draws
it live."""
