#!/usr/bin/env bash
# Regenerates kafka-dump-log's message tables (src/cli/dump_log/schema/*.rs, all but mod.rs and
# json.rs) from the message classes of the Kafka release the tests run (tests/broker/
# kafka-broker.sh resolves its jars). Run after moving to a new Kafka release, then review the
# diff: new record types also need a line in src/cli/dump_log/parsers.rs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
LIBS=$(bash tests/broker/kafka-broker.sh libs)
OUT=src/cli/dump_log/schema
# Every table is generated into a scratch directory first and moved into place only when all
# succeeded: a failure part way must not leave tables of two Kafka releases side by side.
GEN=$(mktemp -d)
trap 'rm -rf "$GEN"' EXIT
M=org.apache.kafka.common.message
G=org.apache.kafka.coordinator.group.generated
T=org.apache.kafka.coordinator.transaction.generated
S=org.apache.kafka.coordinator.share.generated
MD=org.apache.kafka.common.metadata

tables() {
    local file=$1 description=$2
    shift 2
    java -cp "$LIBS/*" tools/SchemaTables.java "$description" "$@" >"$GEN/$file"
}

pairs() {
    local package=$1
    shift
    for n in "$@"; do printf '%s.%sKey %s.%sValue ' "$package" "$n" "$package" "$n"; done
}

# shellcheck disable=SC2046
tables control.rs "KRaft control records" $M.LeaderChangeMessage $M.SnapshotHeaderRecord \
    $M.SnapshotFooterRecord $M.KRaftVersionRecord $M.VotersRecord
# shellcheck disable=SC2046
tables transaction.rs "Transaction coordinator records (__transaction_state)" \
    $(pairs $T TransactionLog)
# shellcheck disable=SC2046
tables share.rs "Share coordinator records (__share_group_state)" \
    $(pairs $S ShareSnapshot ShareUpdate)
# shellcheck disable=SC2046
tables group.rs "Group coordinator records of classic and consumer groups (__consumer_offsets)" \
    $(pairs $G LegacyOffsetCommit OffsetCommit GroupMetadata ConsumerGroupMetadata \
        ConsumerGroupPartitionMetadata ConsumerGroupMemberMetadata \
        ConsumerGroupTargetAssignmentMetadata ConsumerGroupTargetAssignmentMember \
        ConsumerGroupCurrentMemberAssignment ConsumerGroupRegularExpression) \
    $M.ConsumerProtocolSubscription $M.ConsumerProtocolAssignment
# shellcheck disable=SC2046
tables group_share_streams.rs \
    "Group coordinator records of share and streams groups (__consumer_offsets)" \
    $(pairs $G ShareGroupMemberMetadata ShareGroupMetadata ShareGroupTargetAssignmentMetadata \
        ShareGroupTargetAssignmentMember ShareGroupCurrentMemberAssignment \
        ShareGroupStatePartitionMetadata StreamsGroupMetadata StreamsGroupMemberMetadata \
        StreamsGroupTargetAssignmentMetadata StreamsGroupTargetAssignmentMember \
        StreamsGroupCurrentMemberAssignment StreamsGroupTopology)
records=""
for n in RegisterBroker UnregisterBroker Topic Partition Config PartitionChange FenceBroker \
    UnfenceBroker RemoveTopic DelegationToken UserScramCredential FeatureLevel ClientQuota \
    ProducerIds BrokerRegistrationChange AccessControlEntry RemoveAccessControlEntry NoOp \
    ZkMigrationState RemoveUserScramCredential BeginTransaction EndTransaction AbortTransaction \
    RemoveDelegationToken RegisterController ClearElr; do
    records="$records $MD.${n}Record"
done
# shellcheck disable=SC2086
tables metadata.rs "Cluster metadata records (__cluster_metadata)" $records
rustfmt --edition 2024 "$GEN"/*.rs
mv "$GEN"/*.rs "$OUT"/
