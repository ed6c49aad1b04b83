"""The logic of each DVC stage, one module a stage (the scripts in stages/ are thin Hydra entry points around them)."""
