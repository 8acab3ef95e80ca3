/**
 * Asks for its handle in its constructor, before the engine has set it
 * (STATE_STORE_HANDLE_NOT_INITIALIZED).
 * Input `key STRING` grouped by `key`; output `key STRING`.
 */
import { StatefulProcessor, type StatefulProcessorHandle } from 'sluice';

type Key = { key: string };

export default class HandleInConstructor extends StatefulProcessor<Key, Key, Key> {
  constructor() {
    super();
    this.getHandle();
  }

  init(_handle: StatefulProcessorHandle): void {}

  handleInputRows(key: Key): Key[] {
    return [key];
  }
}
