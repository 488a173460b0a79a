"""Machine code without a GPU: the CUDA tools (:mod:`.cuda_tools`), the build with nvcc, ptxas and
nvdisasm (:mod:`.build`), the parsers of their text (:mod:`.text`), the disk cache of what they said
(:mod:`.cache`), the record of one build (:mod:`.record`) and per-arch occupancy (:mod:`.occupancy`)."""
