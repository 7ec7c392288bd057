// The mutate-lnamespace webhook (see shared/webhooks/handlers/mutate-lnamespace.ts).
import * as functions from '@google-cloud/functions-framework';
import { webhookFunction } from '../../shared/webhooks/serve.ts';

functions.http('mutate-lnamespace', await webhookFunction('mutate-lnamespace'));
