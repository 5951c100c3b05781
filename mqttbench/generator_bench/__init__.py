"""The generator's own benchmarks, apart from the broker benchmark (bench):
the k6 extension as a load generator, measured from outside its process
(extension.py: delivered per CPU-second, RSS, the QoS and transports
sections, docs/benchmarks.md), and a run split over several k6 processes,
merged (instances.py: docs/benchmarks-instances.md)."""
