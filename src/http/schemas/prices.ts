// The operator's prices (docs/prices.md): price plans, an account's plan, and price changes.
import { PRICE_UNITS } from '../../config/schema.js';
import { errorResponse, errorResponses } from './errors.js';

const tags = ['admin'];
const ERRORS = { ...errorResponses(400), ...errorResponse(401, 'No admin token, or a wrong one.'), ...errorResponses(404, 409, 503) };

const micros = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;
const unitPrices = Object.fromEntries(PRICE_UNITS.map((unit) => [unit, micros]));

/** A price list as a model's `price:` in tollroute.yaml: micros per million tokens, per unit otherwise. */
export const PriceList = {
  type: 'object',
  additionalProperties: false,
  description: 'A price list, as a model’s `price:` in tollroute.yaml: integer micros per million tokens for token units, per unit otherwise.',
  properties: {
    ...unitPrices,
    tiers: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['above_input_tokens'],
        properties: { above_input_tokens: { type: 'integer', minimum: 1 }, ...unitPrices },
      },
    },
  },
} as const;

const Multiplier = {
  anyOf: [{ type: 'string' }, { type: 'number' }],
  description: 'A decimal such as "0.8" (at most six decimals, more than 0, at most 1000): every unit price times it, rounded half up to a whole micro.',
} as const;

const Plan = {
  type: 'object',
  required: ['name', 'multiplier', 'models', 'prices', 'accounts', 'updated_at'],
  properties: {
    name: { type: 'string' },
    multiplier: { type: ['string', 'null'], description: 'The multiplier of every model the plan names no other way for; null: 1.' },
    models: { type: 'object', additionalProperties: { type: 'string' }, description: 'Model id -> its own multiplier.' },
    prices: { type: 'object', additionalProperties: PriceList, description: 'Model id -> prices of the plan’s own, in place of any multiplier.' },
    accounts: { type: 'integer', description: 'How many accounts are on the plan.' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

export const PutPlanSchema = {
  tags,
  summary: 'Creates or replaces a price plan.',
  body: {
    type: 'object',
    required: ['name'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,63}$', description: 'The plan’s name: lowercase letters, digits, - and _.' },
      multiplier: Multiplier,
      models: { type: 'object', additionalProperties: Multiplier, description: 'Model id -> a multiplier for that model alone.' },
      prices: { type: 'object', additionalProperties: PriceList, description: 'Model id -> the plan’s own prices for it.' },
    },
  },
  response: { 200: { ...Plan, description: 'The plan.' }, ...ERRORS },
};

export const ListPlansSchema = {
  tags,
  summary: 'Every price plan.',
  response: { 200: { type: 'object', required: ['data'], properties: { data: { type: 'array', items: Plan } } }, ...ERRORS },
};

export const DeletePlanSchema = {
  tags,
  summary: 'Deletes a price plan no account is on.',
  params: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
  response: { 204: { type: 'null', description: 'Deleted.' }, ...ERRORS },
};

export const AssignPlanSchema = {
  tags,
  summary: 'Puts an account on a price plan (or, with null, back on the models’ own prices), from its next call on.',
  params: { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'The account id.' } } },
  body: {
    type: 'object',
    required: ['plan'],
    additionalProperties: false,
    properties: { plan: { type: ['string', 'null'], description: 'The plan’s name; null: none.' } },
  },
  response: {
    200: { type: 'object', required: ['account_id', 'plan'], properties: { account_id: { type: 'string' }, plan: { type: ['string', 'null'] } } },
    ...ERRORS,
  },
};

const PriceChange = {
  type: 'object',
  required: ['id', 'model', 'price', 'effective_at', 'created_at', 'note'],
  properties: {
    id: { type: 'string' },
    model: { type: 'string' },
    price: PriceList,
    effective_at: { type: 'string', format: 'date-time' },
    created_at: { type: 'string', format: 'date-time' },
    note: { type: ['string', 'null'] },
  },
} as const;

export const CreatePriceChangeSchema = {
  tags,
  summary: 'A model’s new prices from a stated time on (now when none is given); calls already started keep theirs.',
  body: {
    type: 'object',
    required: ['model', 'price'],
    additionalProperties: false,
    properties: {
      model: { type: 'string', minLength: 1, description: 'A model id of the catalogue.' },
      price: PriceList,
      effective_at: { type: 'string', format: 'date-time', description: 'When the prices apply from; now when absent.' },
      note: { type: 'string', maxLength: 500 },
    },
  },
  response: { 201: { ...PriceChange, description: 'The change.' }, ...ERRORS },
};

export const ListPriceChangesSchema = {
  tags,
  summary: 'The history of price changes, newest effective time first.',
  querystring: { type: 'object', properties: { model: { type: 'string', description: 'Only this model’s changes.' } } },
  response: { 200: { type: 'object', required: ['data'], properties: { data: { type: 'array', items: PriceChange } } }, ...ERRORS },
};
