"""torch.fx to MLIR with columns: a model exported under callsite.torch and imported by
torch-mlir's FX importer, each op located by the callsite Traceback of the node it came from
(model.py: the user's model; locations.py: the importer's location hook; program.py: runs it)."""
