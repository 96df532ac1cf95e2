"""librdkafka's transactional producer (confluent-kafka) against kafka-server-start.

transactions.py BOOTSTRAP TRANSACTIONAL_ID TOPIC PREFIX COUNT [hang [TIMEOUT_MS]]
    COUNT transactions (COUNT -1: until killed or an error), each sending PREFIX-tN-pK to
    partitions K = 0, 1, 2 of TOPIC. Transactions N with N % 3 == 2 are aborted, the others
    committed; each prints "committed N" or "aborted N" once the server answered. Exits 0 after
    COUNT transactions, 1 on an error (printed on stderr). With "hang", one more transaction
    is sent and left open (transaction.timeout.ms TIMEOUT_MS, 60 s by default): "open N" is
    printed and the process ends at once.
"""

import os

import sys

from confluent_kafka import KafkaException, Producer


def main():
    bootstrap, transactional_id, topic, prefix, count = sys.argv[1:6]
    count = int(count)
    hang = sys.argv[6:7] == ["hang"]
    timeout = int(sys.argv[7]) if len(sys.argv) > 7 else 60000
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": transactional_id,
            "transaction.timeout.ms": timeout if hang else 10000,
        }
    )
    try:
        producer.init_transactions(30)
        n = 0
        while count < 0 or n < count:
            producer.begin_transaction()
            for partition in range(3):
                value = f"{prefix}-t{n}-p{partition}".encode()
                producer.produce(topic, value=value, partition=partition)
            producer.flush(30)
            if n % 3 == 2:
                producer.abort_transaction(30)
                print(f"aborted {n}", flush=True)
            else:
                producer.commit_transaction(30)
                print(f"committed {n}", flush=True)
            n += 1
        if hang:
            producer.begin_transaction()
            for partition in range(3):
                value = f"{prefix}-t{n}-p{partition}".encode()
                producer.produce(topic, value=value, partition=partition)
            producer.flush(30)
            print(f"open {n}", flush=True)
            os._exit(0)
    except KafkaException as e:
        print(f"transactions.py: {e}", file=sys.stderr, flush=True)
        sys.exit(1)


main()
