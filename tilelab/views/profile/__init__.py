"""The Explorer's Profile tab (a record with an ncu profile): :mod:`.data` shapes its JSON (per profiled launch its
sections: Speed of Light bars, the roofline position and plot, occupancy, launch, ncu's advice); :mod:`.snapshot`
renders that JSON as script-free HTML; ``src/widgets/profile.ts`` draws it live."""
