"""Where pods and brokers run: `local` processes, `docker` containers."""
