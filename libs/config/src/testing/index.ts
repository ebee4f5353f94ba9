export * from './sample.js';
