"""The methods ProactiveStream scores (ProactMem §5): ProactMem, its baselines and ablations.

Every method is ProactMem's engine (``memory/engine``) with one policy and its switches, so a
benchmark run decides exactly as the service would. Methods see only public fields (the
harness strips ``private`` before anything reaches them) and share no code with the labelers
(``benchmark/labelers``): both read only ``benchmark/streams/records.py`` and the service
catalogue.
"""
