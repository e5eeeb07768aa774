"""Realtime: brokers and the pane event stream."""

from __future__ import annotations

from dealroom.realtime.broker import Broker, InProcessBroker


def create_broker(redis_url: str | None) -> Broker:
    if redis_url:
        from dealroom.realtime.redis_broker import RedisBroker

        return RedisBroker(redis_url)
    return InProcessBroker()


__all__ = ["Broker", "InProcessBroker", "create_broker"]
