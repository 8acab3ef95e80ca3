/**
 * Reading S3 event notifications from SQS message bodies (lib/aws/sqs/s3-events.ts): the shapes
 * S3 writes, the test event, EventBridge and SNS envelopes, and what is malformed.
 */
import { decodeEventKey, parseS3Notification } from '../../lib/aws/sqs/s3-events';
import { s3EventBody, s3TestEventBody } from '../helpers/s3-notifications';

describe('parseS3Notification', () => {
  it('reads an ObjectCreated record: the decoded key, size, unquoted ETag and event time', () => {
    const body = s3EventBody({
      bucket: 'b',
      key: 'in/a b+c.json',
      size: 42,
      etag: '"abc"',
      eventTime: '2026-12-01T10:00:01.250Z',
      eventName: 'ObjectCreated:CompleteMultipartUpload',
    });
    expect(parseS3Notification(body)).toEqual({
      kind: 'records',
      records: [
        {
          kind: 'created',
          bucket: 'b',
          key: 'in/a b+c.json',
          size: 42,
          etag: 'abc',
          lastModified: Date.parse('2026-12-01T10:00:01.250Z'),
          eventName: 'ObjectCreated:CompleteMultipartUpload',
        },
      ],
    });
  });

  it('reads an ObjectRemoved record as one that names no new file', () => {
    expect(parseS3Notification(s3EventBody({ bucket: 'b', key: 'in/x.json', eventName: 'ObjectRemoved:Delete' }))).toEqual({
      kind: 'records',
      records: [{ kind: 'ignored', bucket: 'b', key: 'in/x.json', eventName: 'ObjectRemoved:Delete' }],
    });
  });

  it("reads S3's test event", () => {
    expect(parseS3Notification(s3TestEventBody('b'))).toEqual({ kind: 'test', bucket: 'b' });
  });

  it('reads an S3 event that came through SNS without raw delivery', () => {
    const envelope = JSON.stringify({
      Type: 'Notification',
      MessageId: 'x',
      TopicArn: 'arn:aws:sns:us-east-1:1:t',
      Message: s3EventBody({ bucket: 'b', key: 'in/a.json' }),
    });
    expect(parseS3Notification(envelope)).toMatchObject({ kind: 'records', records: [{ kind: 'created', key: 'in/a.json' }] });
  });

  it('reads an EventBridge Object Created event (its key is not URL-encoded)', () => {
    const event = {
      version: '0',
      id: '17793124-05d4-b198-2fde-7ededc63b103',
      'detail-type': 'Object Created',
      source: 'aws.s3',
      account: '111122223333',
      time: '2026-12-01T10:00:02Z',
      region: 'us-east-1',
      resources: ['arn:aws:s3:::b'],
      detail: { version: '0', bucket: { name: 'b' }, object: { key: 'in/a+b c.json', size: 5, etag: 'e' }, reason: 'PutObject' },
    };
    expect(parseS3Notification(JSON.stringify(event))).toEqual({
      kind: 'records',
      records: [
        {
          kind: 'created',
          bucket: 'b',
          key: 'in/a+b c.json',
          size: 5,
          etag: 'e',
          lastModified: Date.parse('2026-12-01T10:00:02Z'),
          eventName: 'Object Created',
        },
      ],
    });
    expect(parseS3Notification(JSON.stringify({ ...event, 'detail-type': 'Object Deleted' }))).toMatchObject({
      records: [{ kind: 'ignored', eventName: 'Object Deleted' }],
    });
  });

  it.each([
    ['', /empty/],
    ['not json', /not JSON/],
    ['[1]', /not a JSON object/],
    ['{"hello":"world"}', /no Records/],
    ['{"Records":[]}', /no records/],
    [JSON.stringify({ Records: [{ eventName: 'ObjectCreated:Put', s3: { bucket: { name: 'b' }, object: {} } }] }), /record 0: no s3.object.key/],
    [
      JSON.stringify({ Records: [{ eventName: 'ObjectCreated:Put', eventTime: 'x', s3: { bucket: { name: 'b' }, object: { key: 'k', size: 1 } } }] }),
      /eventTime "x" is not a time/,
    ],
    [
      JSON.stringify({
        Records: [{ eventName: 'ObjectCreated:Put', eventTime: '2026-12-01T10:00:00Z', s3: { bucket: { name: 'b' }, object: { key: 'k%E0', size: 1 } } }],
      }),
      /not URL-encoded UTF-8/,
    ],
    [JSON.stringify({ Records: [{ eventSource: 'aws:dynamodb', eventName: 'INSERT' }] }), /not aws:s3/],
  ])('calls %j malformed, with the reason', (body, reason) => {
    const parsed = parseS3Notification(body);
    expect(parsed.kind).toBe('malformed');
    expect((parsed as { reason: string }).reason).toMatch(reason);
  });
});

describe('decodeEventKey', () => {
  it("decodes S3's form encoding: '+' is a space, %2B a plus", () => {
    expect(decodeEventKey('a+b%2Bc%3D%C3%A9/d')).toBe('a b+c=é/d');
    expect(decodeEventKey('%zz')).toBeUndefined();
  });
});
