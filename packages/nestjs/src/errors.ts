/**
 * Hopper's typed errors, as the module throws them. Hopper's declaration files type these classes'
 * instances structurally (a class built by a mixin), so they are returned here as the Errors they are.
 */
import { InvalidOptionsError, UnsupportedOptionError } from 'hopper-queue';

/** An `InvalidOptionsError` (code `ERR_HOPPER_INVALID_OPTIONS`): a module option or declaration Hopper cannot use. */
export function invalidOptions(message: string): Error {
  return new InvalidOptionsError(message);
}

/** An `UnsupportedOptionError`: an @nestjs/bullmq option Hopper does not implement. */
export function unsupportedOption(message: string, owner: string, option: string): Error {
  return new UnsupportedOptionError(message, owner, option);
}
