#!/usr/bin/env bash
# Runs inside the LocalStack container once it is ready (init/ready.d). Creates what a sluice
# pipeline needs when it is not deployed with CDK: one bucket for the landing, checkpoint and
# output prefixes, the state/lease table (pk/sk, TTL on `ttl`) and the Kinesis stream.
# Idempotent: a restart with a persisted volume finds everything in place.
set -euo pipefail

BUCKET="${SLUICE_BUCKET:-sluice-local}"
TABLE="${SLUICE_STATE_TABLE:-sluice-state}"
STREAM="${SLUICE_STREAM:-sluice-events}"
REGION="${AWS_DEFAULT_REGION:-us-east-1}"

echo "sluice: creating bucket s3://${BUCKET}"
if ! awslocal s3api head-bucket --bucket "${BUCKET}" >/dev/null 2>&1; then
  if [ "${REGION}" = "us-east-1" ]; then
    awslocal s3api create-bucket --bucket "${BUCKET}" >/dev/null
  else
    awslocal s3api create-bucket --bucket "${BUCKET}" --create-bucket-configuration "LocationConstraint=${REGION}" >/dev/null
  fi
fi
awslocal s3api put-public-access-block --bucket "${BUCKET}" \
  --public-access-block-configuration BlockPublicAcls=true,IgnorePublicAcls=true,BlockPublicPolicy=true,RestrictPublicBuckets=true
awslocal s3api put-bucket-encryption --bucket "${BUCKET}" \
  --server-side-encryption-configuration '{"Rules":[{"ApplyServerSideEncryptionByDefault":{"SSEAlgorithm":"AES256"}}]}'

echo "sluice: creating table ${TABLE} (pk/sk, TTL on ttl)"
if ! awslocal dynamodb describe-table --table-name "${TABLE}" >/dev/null 2>&1; then
  awslocal dynamodb create-table \
    --table-name "${TABLE}" \
    --attribute-definitions AttributeName=pk,AttributeType=S AttributeName=sk,AttributeType=S \
    --key-schema AttributeName=pk,KeyType=HASH AttributeName=sk,KeyType=RANGE \
    --billing-mode PAY_PER_REQUEST >/dev/null
  awslocal dynamodb wait table-exists --table-name "${TABLE}"
fi
awslocal dynamodb update-time-to-live --table-name "${TABLE}" \
  --time-to-live-specification Enabled=true,AttributeName=ttl >/dev/null 2>&1 || true

echo "sluice: creating stream ${STREAM} (on demand)"
if ! awslocal kinesis describe-stream-summary --stream-name "${STREAM}" >/dev/null 2>&1; then
  awslocal kinesis create-stream --stream-name "${STREAM}" --stream-mode-details StreamMode=ON_DEMAND
  awslocal kinesis wait stream-exists --stream-name "${STREAM}"
fi

echo "sluice: resources ready: s3://${BUCKET} (landing/, checkpoints/, output/), table ${TABLE}, stream ${STREAM}"
