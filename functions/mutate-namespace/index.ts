// The mutate-namespace webhook (see shared/webhooks/handlers/mutate-namespace.ts).
import * as functions from '@google-cloud/functions-framework';
import { webhookFunction } from '../../shared/webhooks/serve.ts';

functions.http('mutate-namespace', await webhookFunction('mutate-namespace'));
