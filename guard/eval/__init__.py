"""Measuring the guard: data set readers (``datasets``, ``chitchat``, ``dialogue_text``), the papers' metrics
(``metrics``), evaluation (``evaluation``), behavioural probes (``probes``), the live-stream dev sets (``stream``,
``dev_streams``, ``decode_stream``) and the papers' built-in examples (``examples``)."""
