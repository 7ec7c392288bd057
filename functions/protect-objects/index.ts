// The protect-objects webhook (see shared/webhooks/handlers/protect-objects.ts).
import * as functions from '@google-cloud/functions-framework';
import { webhookFunction } from '../../shared/webhooks/serve.ts';

functions.http('protect-objects', await webhookFunction('protect-objects'));
