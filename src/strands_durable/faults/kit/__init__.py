"""The fault kit's one vocabulary: what to run (`target`), the golden run every fault is judged against
(`golden`), the observer and options of every fault run (`observe`), the judge's rules (`judge`) and its evidence
(`ledger`, `oracle`, `snapshot`, `workspace`), the runs the classes share (`runs`), findings, cassettes, child
processes, the one process tuning (`collector`, opt-in) and where every run's sessions live (`stores`: the one
module of `faults/` that names a store implementation). Imports nothing else of `faults/`."""
