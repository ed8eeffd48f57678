"""The DSL demo: tinydsl (a small DSL framework), helpers (a helper library), kernels (the
user's code) and demo (builds them with callsite.mlir.auto_locations and shows the locations)."""
