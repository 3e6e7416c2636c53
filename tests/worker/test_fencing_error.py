"""`clients.fencing_error` finds a fence however kafka-python reports it: the error itself,
wrapped in a later call's KafkaError, or only named in that error's message (the form
that made the broker test read a fence as an unknown error now and then)."""

from __future__ import annotations

import kafka.errors as Errors

from workloads.worker.clients import fencing_error


def test_a_fence_is_found_in_each_form_kafka_python_gives() -> None:
    fenced = Errors.ProducerFencedError("epoch")
    assert fencing_error(fenced) is fenced
    assert fencing_error(Errors.KafkaError(fenced)) is fenced
    named = Errors.KafkaError("Cannot execute transactional method because we are in an "
                              "error state: ProducerFencedError")
    assert isinstance(fencing_error(named), Errors.ProducerFencedError)
    instance = Errors.KafkaError("in an error state: FencedInstanceIdError")
    assert isinstance(fencing_error(instance), Errors.FencedInstanceIdError)


def test_other_errors_are_no_fence() -> None:
    assert fencing_error(Errors.KafkaError("Cannot execute transactional method")) is None
    assert fencing_error(ValueError("ProducerFencedError")) is None
