"""The Explorer's Machine code tab: :mod:`.data` shapes its JSON (state, a resource card and instruction classes
per device kernel, the SASS or PTX beside the CUDA); :mod:`.snapshot` renders that JSON as script-free HTML;
``src/widgets/machine.ts`` draws it live."""
