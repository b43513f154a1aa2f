import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from './duplicate-key';
import { ensureExpiry, type ExpiryRule } from './ttl';

/**
 * Webhook deliveries from the providers, stored as they came once their signature is
 * verified, before they are answered: everything done with one starts from this copy, so a
 * process that dies after the answer loses nothing. Read and written by `_id` only.
 */
export interface ProviderDeliveryDoc {
  /** providerDeliveryId(environment, integration, delivery): a redelivery has the same. */
  _id: string;
  environment: string;
  /** The integration's unique key. */
  provider_config_key: string;
  provider: string;
  /** The provider's id of the delivery (GitHub: `X-GitHub-Delivery`). */
  delivery_id: string;
  /** The provider's event (GitHub: `X-GitHub-Event`). */
  event: string;
  /** The raw body, as signed. */
  body: string;
  received_at: Date;
}

/** How long a delivery is kept. */
const PROVIDER_DELIVERY_TTL_SECONDS = 7 * 86_400;

export function providerDeliveryId(environment: string, providerConfigKey: string, deliveryId: string): string {
  return [environment, providerConfigKey, deliveryId].map(encodeURIComponent).join(':');
}

export class ProviderDeliveryStore {
  private readonly col: Collection<ProviderDeliveryDoc>;
  constructor(db: Db) {
    this.col = db.collection<ProviderDeliveryDoc>('provider_deliveries');
  }

  async ensureIndexes(): Promise<ExpiryRule> {
    return ensureExpiry(this.col, 'received_at', PROVIDER_DELIVERY_TTL_SECONDS);
  }

  /** Stores a delivery; `false` when one with its id is stored already (a redelivery). */
  async add(doc: Omit<ProviderDeliveryDoc, '_id'>): Promise<boolean> {
    try {
      await this.col.insertOne({ _id: providerDeliveryId(doc.environment, doc.provider_config_key, doc.delivery_id), ...doc });
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  async get(id: string): Promise<ProviderDeliveryDoc | null> {
    return this.col.findOne({ _id: id });
  }
}
