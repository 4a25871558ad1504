/**
 * A bad dashboard option: Hopper's InvalidOptionsError (code `InvalidOptions`), returned typed as
 * an Error (its class is built by a mixin whose declared type the linter cannot see through).
 */
import { InvalidOptionsError } from 'hopper-queue';

export const invalidOption = (message: string): Error => new InvalidOptionsError(message);
