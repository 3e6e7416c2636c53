# The kchaos broker image: a Java runtime and the Kafka jars the harness fetches from Maven
# (harness/kafka/pom.xml pins the release: one pin for local, compose and docker runs),
# run as harness/kafka/cluster.py runs its brokers. The build context is made by
# harness/platforms/docker_images.py (`make images`): this file, kafka-run.sh, the
# harness's log4j2.properties and libs/ (the jars, copied from ~/.cache/kchaos).
ARG BASE_IMAGE=kchaos-base:bookworm
FROM ${BASE_IMAGE}

# man1 first: slim Debian images drop man pages and the JRE's postinst expects the folder.
RUN mkdir -p /usr/share/man/man1 \
    && apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
       openjdk-17-jre-headless \
    && rm -rf /var/lib/apt/lists/*

COPY libs /opt/kafka/libs
COPY log4j2.properties kafka-run.sh /opt/kafka/
RUN chmod 755 /opt/kafka/kafka-run.sh && mkdir -p /var/lib/kafka/data
VOLUME ["/var/lib/kafka/data"]

# SIGTERM: the JVM's controlled shutdown; the engine's SIGKILL is a crash.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/opt/kafka/kafka-run.sh"]
CMD ["broker"]
