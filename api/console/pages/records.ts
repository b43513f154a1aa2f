import type { Request, Response } from 'express';
import { z } from 'zod';
import { findConnection } from '../../../store/connection-lookup';
import type { ApiDeps } from '../../deps';
import { listRecordsQuery } from '../../schemas/records';
import { listRecordsPage, recordModels } from '../../services/record-listing';
import { parseInput } from '../../validate';
import { sessionOf } from '../auth';
import { html } from '../view/html';
import { badge, connectionHref, consolePage, json, pager, time } from '../view/layout';

const PAGE_SIZE = 25;

const recordsQuery = z.object({
  model: z.string().min(1).max(255).optional(),
  variant: z.string().min(1).max(255).optional(),
  /** `added`, `updated` or `deleted`: the records whose last change was that. */
  last_action: z.enum(['added', 'updated', 'deleted']).or(z.literal('')).optional(),
  cursor: z.string().max(1000).optional(),
});

const ACTION_TONE = { ADDED: 'ok', UPDATED: 'warn', DELETED: 'bad' } as const;

/** GET /console/connections/:key/:id/records: a model's records, paged as GET /records pages them, each as JSON. */
export async function recordsPage(deps: ApiDeps, req: Request, res: Response): Promise<void> {
  const session = sessionOf(res);
  const q = parseInput(recordsQuery, req.query, 'invalid_query_params');
  const { connection } = await findConnection(deps.stores, session.environment, String(req.params.key), String(req.params.id));
  const models = recordModels(deps.registry, connection.provider);
  const model = q.model ?? models[0]?.model;
  const page = model
    ? await listRecordsPage(
        deps.stores,
        deps.registry,
        connection,
        parseInput(
          listRecordsQuery,
          { model, variant: q.variant, cursor: q.cursor, limit: String(PAGE_SIZE), filter: q.last_action || undefined },
          'invalid_query_params',
        ),
      )
    : { records: [], next_cursor: null };
  const base = connectionHref(connection.provider_config_key, connection.connection_id);
  res.type('html').send(
    consolePage({
      title: `Records of ${connection.connection_id}`,
      page: 'console-records',
      section: 'connections',
      session,
      body: html`<h1>Records of <a href=${base}><code>${connection.connection_id}</code></a></h1>
        <form class="filters" method="get" action=${`${base}/records`}>
          <label
            >Model
            <select name="model">
              ${models.map((m) => html`<option value=${m.model} selected=${m.model === model}>${m.model}${m.unified ? ' (unified)' : ''}</option>`)}
            </select></label
          >
          <label
            >Last change
            <select name="last_action">
              <option value="">Any</option>
              ${(['added', 'updated', 'deleted'] as const).map((a) => html`<option value=${a} selected=${a === q.last_action}>${a}</option>`)}
            </select></label
          >
          <button type="submit">Show</button>
        </form>
        <div class="panel">
          <table>
            <thead>
              <tr><th>Id</th><th>Last change</th><th>Modified</th><th>Record</th></tr>
            </thead>
            <tbody>
              ${
                page.records.length
                  ? page.records.map((r) => {
                      const meta = r._weft_metadata;
                      const id = String((r as { id?: unknown }).id ?? '');
                      return html`<tr data-record=${id}>
                      <td><code>${id}</code></td>
                      <td>${badge(meta.last_action, ACTION_TONE[meta.last_action])}</td>
                      <td>${time(meta.last_modified_at)}</td>
                      <td>${json(r)}</td>
                    </tr>`;
                    })
                  : html`<tr><td colspan="4" class="muted">No records.</td></tr>`
              }
            </tbody>
          </table>
          ${pager(`${base}/records`, { model, variant: q.variant, last_action: q.last_action || undefined, cursor: q.cursor }, page.next_cursor)}
        </div>`,
    }),
  );
}
