import { createSweeperHandler } from 'logbook/lambda';

export const handler = createSweeperHandler();
