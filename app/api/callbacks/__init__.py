"""Queue callbacks: customers waiting to be called back by an agent of a queue."""
