"""Reads, batch and stream: planning offset ranges on the driver, packing them into Spark partitions, and what a
read task runs on the executors."""
