// The mutate-pod webhook (see shared/webhooks/handlers/mutate-pod.ts).
import * as functions from '@google-cloud/functions-framework';
import { webhookFunction } from '../../shared/webhooks/serve.ts';

functions.http('mutate-pod', await webhookFunction('mutate-pod'));
