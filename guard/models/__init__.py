"""The guard's models: the NLI cross-encoder over any checkpoint (``nli``) and its int8 ONNX runtime
(``onnx_runtime``), detectors by name (``registry``), loading each once (``loading``), and the cache of scored pairs
and embeddings per model (``pair_cache``)."""
