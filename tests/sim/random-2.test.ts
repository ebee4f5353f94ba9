/** Random fault schedules, seeds 13–24 (split in files so the runner can use both cores). */
import { randomSuite } from './framework/random-suite.js';

randomSuite(13, 25);
