"""The shopper-behaviour engine: events in, the outbox drained, behaviour tables, popularity and ranker
trials; front door :class:`aisle.behaviour.engine.BehaviourEngine`."""
