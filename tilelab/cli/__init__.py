"""The ``tilelab`` command: :mod:`.main` parses and dispatches; a module for each command that needs more
(:mod:`.tune`, :mod:`.cache`, :mod:`.repro`) and :mod:`.load` for what the command line reads."""
