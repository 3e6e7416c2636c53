# A Java pod (Kafka Streams: the ledger app, or a user's app through the launcher): the
# broker image's Java runtime and the app's jars. The build context is made by
# harness/platforms/docker_images.py: this file and app/ (the jars of the app's build).
# BASE_IMAGE is the kchaos-kafka image of the run's Kafka release.
ARG BASE_IMAGE
FROM ${BASE_IMAGE}

COPY app /opt/kchaos-app

# The run gives the whole java command line; SIGTERM closes the Kafka Streams client.
ENTRYPOINT []
STOPSIGNAL SIGTERM
